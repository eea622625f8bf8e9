"""`meshdbg run` in a pseudo-terminal: the attached rank's output shows once, in order with pdb's,
as in a local terminal; the rank's log lines come back once the console no longer shows it."""

from __future__ import annotations

import io
import os
import re
import sys
from pathlib import Path

import pexpect

HERE = Path(__file__).parent
RANK0 = re.escape("(Pdb r0 gpus=0)")


def test_the_attached_ranks_output_shows_once_in_its_session_then_in_the_logs(tmp_path: Path,
                                                                              private_runtime_dir: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    env.update(MESHDBG_RUNTIME_DIR=str(private_runtime_dir), MESHDBG_HISTORY=str(tmp_path / "history"),
               NO_COLOR="1", TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(sys.executable, ["-m", "meshdbg", "run", "--mesh", "gpus=2", str(HERE / "printing_job.py")],
                          env=env, encoding="utf-8", timeout=20, dimensions=(40, 160))
    child.logfile_read = io.StringIO()
    try:
        child.expect(RANK0)
        child.sendline("n")
        child.expect("printed while stepped")
        child.expect(re.escape('-> print("after the session")'))
        child.expect(RANK0)
        child.sendline("c")
        child.expect(re.escape("[r0 gpus=0] after the session"))
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    text = child.logfile_read.getvalue()
    printed = re.findall(r'(?<!print\(")printed while stepped', text)  # not pdb's source line
    assert printed == ["printed while stepped"] and "[r0 gpus=0] printed while stepped" not in text
    assert "[r1 gpus=1] rank 1 ran" in text and "\x1b]7417" not in text
