"""`meshdbg run` in a pseudo-terminal: the attached rank's output shows once, in order with pdb's,
as in a local terminal; the rank's log lines come back once the console no longer shows it, and
attaching again does not show them a second time."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pexpect

from printing_run import run_argv, spawn_run, step_over_the_print

TICKING_JOB = Path(__file__).with_name("ticking_job.py")


def test_the_attached_ranks_output_shows_once_in_its_session_then_in_the_logs(tmp_path: Path,
                                                                              private_runtime_dir: Path) -> None:
    child = spawn_run(run_argv("--mesh", "gpus=2"), tmp_path, private_runtime_dir)
    try:
        text = step_over_the_print(child, "r0 gpus=0")
    finally:
        child.close(force=True)
    assert "[r1 gpus=1] rank 1 ran" in text


def test_attaching_again_does_not_repeat_what_the_rank_printed_meanwhile(tmp_path: Path,
                                                                        private_runtime_dir: Path) -> None:
    # Before, the replay of an attach held all the program printed since pdb's last command:
    # each tick shown as a log line while detached came again (up to 64 KiB of it).
    child = spawn_run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=1", str(TICKING_JOB)], tmp_path,
                      private_runtime_dir)
    try:
        prompt = re.escape("(Pdb r0 gpus=0)")
        child.expect(prompt)
        child.expect("tick")  # shown in the session, live
        child.sendline("detach")
        child.expect(re.escape("detached from rank 0"))
        child.expect(re.escape("[r0 gpus=0] tick"))  # detached: a log line
        child.expect(re.escape("[r0 gpus=0] tick"))
        child.sendline("attach 0")
        child.expect("attached to rank 0")
        child.expect(prompt)
        child.expect("tick")  # the session shows the ticks again, live
        child.sendline("c")
        child.expect(pexpect.EOF)
        text = child.logfile_read.getvalue()
    finally:
        child.close(force=True)
    lines = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "").split("\n")
    detached = next(i for i, line in enumerate(lines) if line.startswith("detached from rank 0"))
    again = next(i for i, line in enumerate(lines) if i > detached and line.startswith("attached to rank 0"))
    # (A log line may follow the console's prompt, erased then redrawn, on the terminal's line.)
    logged = {match[1] for line in lines[detached:again] if (match := re.search(r"\[r0 gpus=0\] (tick \d+)$", line))}
    assert logged  # the ticks shown as log lines while no console showed the session...
    assert not logged & set(lines[again:])  # ...are not shown again by the attach
