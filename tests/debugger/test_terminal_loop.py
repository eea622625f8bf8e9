"""`meshdbg run`'s loop watching stdin leaves the terminal blocking (meshdbg.debugger.terminal_loop).

stdin, stdout and stderr on one pseudo-terminal share its open file, flags included: uvloop's
watch of stdin made stdout non-blocking too, and a rank's log lines written while the terminal
lagged met EAGAIN and were lost."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

WATCH_STDIN = """
import os, sys
from meshdbg.debugger.cli import loop_factory
loop = loop_factory("run")()
loop.add_reader(0, lambda: None)
loop.add_reader(sys.stdin, lambda: None)  # (a file object, as some readers pass)
print(os.get_blocking(0), os.get_blocking(1), file=sys.stderr)
loop.remove_reader(0)
loop.close()
"""


def test_watching_stdin_leaves_a_shared_terminal_blocking() -> None:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-c", WATCH_STDIN], stdin=terminal, stdout=terminal,
                              stderr=subprocess.PIPE, text=True, timeout=30)
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 0, done.stderr
    assert done.stderr.split() == ["True", "True"]  # stdin, and stdout beside it on the same terminal
