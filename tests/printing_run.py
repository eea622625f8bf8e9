"""`meshdbg run` of debugger/console/printing_job.py in a pseudo-terminal, on one host or several:
rank 0 stops, the console opens in it, `n` runs a print while the session is open, `c` ends the job.

What the rank printed while its session was open shows once, in the session, and not again as a
prefixed log line; what it prints after shows as a log line (meshdbg.wire.shown_marks).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect

from pty_child import PtyChild

PRINTING_JOB = Path(__file__).parent / "debugger" / "console" / "printing_job.py"
PRINTED = "printed while stepped"  # what rank 0 prints while its session is open


def spawn_run(argv: list[str], tmp_path: Path, runtime_dir: Path, **env: str) -> PtyChild:
    """`argv` (a `meshdbg run`) in a pseudo-terminal, with a private runtime dir and history, no colour."""
    environ = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    environ.update(env, MESHDBG_RUNTIME_DIR=str(runtime_dir), MESHDBG_HISTORY=str(tmp_path / "history"), NO_COLOR="1",
                   TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    return PtyChild(argv, env=environ, timeout=30, dimensions=(40, 160))


def run_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "meshdbg", "run", *args, str(PRINTING_JOB)]


def step_over_the_print(child: PtyChild, label: str) -> str:
    """Rank 0 (`label`, e.g. `r0 gpus=0`) stepped over its print, then continued to the job's end;
    asserts the print showed once; everything the terminal showed."""
    prompt = re.escape(f"(Pdb {label})")
    child.expect(prompt)
    child.sendline("n")
    child.expect(PRINTED)
    child.expect(re.escape('-> print("after the session")'))
    child.expect(prompt)
    child.sendline("c")
    child.expect(re.escape(f"[{label}] after the session"))  # no session open: a log line again
    child.expect(pexpect.EOF)
    text = child.logfile_read.getvalue()
    printed = re.findall(r'(?<!print\(")printed while stepped', text)  # not pdb's source line
    assert printed == ["printed while stepped"] and f"[{label}] printed while stepped" not in text
    assert "\x1b]7417" not in text
    return text
