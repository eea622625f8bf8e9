"""A multi-host `meshdbg run` in a pseudo-terminal: what a rank on another host prints while the
console on the run's terminal is attached to it shows once, in its session, not again as a log
line (its agent sends which lines the session showed; the run leaves them out as for its own)."""

from __future__ import annotations

import io
import os
import re
import secrets
import subprocess
from pathlib import Path

import pexpect

from netns import HOST_SCRIPTS, meshdbg

PRINTING = Path(__file__).parents[1] / "debugger" / "console" / "printing_job.py"  # r0 stops, prints while stepped
RANK0 = re.escape("(Pdb r0 hosts=0,gpus=0)")


def test_a_remote_ranks_output_shown_in_its_session_is_not_logged_again(cluster, tmp_path: Path,
                                                                       private_runtime_dir: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    env.update(MESHDBG_TOKEN=secrets.token_urlsafe(16), MESHDBG_RUNTIME_DIR=str(private_runtime_dir),
               MESHDBG_HISTORY=str(tmp_path / "history"), NO_COLOR="1", TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    argv = cluster.command("c", meshdbg("run", "--on", "join", "--bind", cluster.address("c"), "--mesh", "hosts=2,gpus=1",
                                        str(PRINTING)))
    child = pexpect.spawn(argv[0], argv[1:], env=env, encoding="utf-8", timeout=30, dimensions=(40, 160),
                          cwd=str(HOST_SCRIPTS))
    child.logfile_read = io.StringIO()
    try:
        child.expect(r"meshdbg host --join (meshdbg://\S+)")
        for host in ("h1", "h2"):
            with open(tmp_path / f"{host}.err", "w") as err:
                cluster.start(host, meshdbg("host", "--join", child.match.group(1)), env, stdout=err,
                              stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)
        child.expect(RANK0)  # the console opened by itself in rank 0, on h1
        child.sendline("n")
        child.expect("printed while stepped")
        child.expect(re.escape('-> print("after the session")'))
        child.expect(RANK0)
        child.sendline("c")
        child.expect(re.escape("[r0 hosts=0,gpus=0] after the session"))  # no session open: a log line again
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = child.logfile_read.getvalue()
    printed = re.findall(r'(?<!print\(")printed while stepped', text)  # not pdb's source line
    assert printed == ["printed while stepped"] and "[r0 hosts=0,gpus=0] printed while stepped" not in text
    assert "[r1 hosts=1,gpus=0] rank 1 ran" in text and "\x1b]7417" not in text
    assert child.exitstatus == 0
