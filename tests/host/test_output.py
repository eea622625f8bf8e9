"""A multi-host `meshdbg run` in a pseudo-terminal: what a rank on another host prints while the
console on the run's terminal is attached to it shows once, in its session, not again as a log
line (its agent sends which lines the session showed; the run leaves them out as for its own)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
from pathlib import Path

import pexpect

from netns import HOST_SCRIPTS, meshdbg
from printing_run import PRINTED, run_argv, spawn_run, step_over_the_print


def test_a_remote_ranks_output_shown_in_its_session_is_not_logged_again(cluster, tmp_path: Path,
                                                                       private_runtime_dir: Path) -> None:
    argv = cluster.command("c", run_argv("--on", "join", "--bind", cluster.address("c"), "--mesh", "hosts=2,gpus=1"))
    child = spawn_run(argv, tmp_path, private_runtime_dir, MESHDBG_TOKEN=secrets.token_urlsafe(16))
    try:
        child.expect(r"meshdbg host --join (meshdbg://\S+)")
        for host in ("h1", "h2"):
            with open(tmp_path / f"{host}.err", "w") as err:
                cluster.start(host, meshdbg("host", "--join", child.match.group(1)), child.env, stdout=err,
                              stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)
        text = step_over_the_print(child, "r0 hosts=0,gpus=0")  # the console opened by itself in rank 0, on h1
    finally:
        child.close(force=True)
    assert "[r1 hosts=1,gpus=0] rank 1 ran" in text
    assert child.exitstatus == 0
    assert "meshdbg host: host 0, rank 0" in (tmp_path / "h1.err").read_text()


def test_a_remote_ranks_shown_lines_that_come_after_the_console_left_it_are_not_logged(
        cluster, tmp_path: Path, private_runtime_dir: Path) -> None:
    """The race a loaded host makes: rank 0's agent is stopped while `n` prints, so the line
    reaches the run only after `c` took the console off rank 0. The run asks the agent to hand
    on rank 0's lines when the console leaves it, and still leaves those out until it has."""
    argv = cluster.command("c", run_argv("--on", "join", "--bind", cluster.address("c"), "--mesh", "hosts=2,gpus=1"))
    child = spawn_run(argv, tmp_path, private_runtime_dir, MESHDBG_TOKEN=secrets.token_urlsafe(16))
    agents: dict[str, subprocess.Popen] = {}
    try:
        child.expect(r"meshdbg host --join (meshdbg://\S+)")
        for host in ("h1", "h2"):
            with open(tmp_path / f"{host}.err", "w") as err:
                agents[host] = cluster.start(host, meshdbg("host", "--join", child.match.group(1)), child.env,
                                             stdout=err, stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)
        prompt = re.escape("(Pdb r0 hosts=0,gpus=0)")
        child.expect(prompt)
        os.kill(agents["h1"].pid, signal.SIGSTOP)  # rank 0's pipes are not read until SIGCONT
        try:
            child.sendline("n")
            child.expect(PRINTED)  # the session's copy, on the worker's own stream
            child.expect(prompt)
            child.sendline("c")
            child.expect("continued")  # the console left rank 0
        finally:
            os.kill(agents["h1"].pid, signal.SIGCONT)
        child.expect(re.escape("[r0 hosts=0,gpus=0] after the session"))
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = child.logfile_read.getvalue()
    assert "[r0 hosts=0,gpus=0] printed while stepped" not in text
    assert child.exitstatus == 0
