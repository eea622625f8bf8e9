"""process_state and pid_alive read one /proc/PID/stat parser (meshdbg.wire.connection): a real
child running, stopped, a zombie, then reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from e2e import wait_for
from meshdbg.wire.connection import pid_alive, process_state


def test_a_childs_state_through_its_life() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert process_state(child.pid) in ("R", "S") and pid_alive(child.pid)
        os.kill(child.pid, signal.SIGSTOP)
        wait_for(lambda: process_state(child.pid) == "T", 10, "the child to be stopped")
        assert pid_alive(child.pid)  # stopped is alive (meshdbg.debugger.liveness keeps its session)
        os.kill(child.pid, signal.SIGKILL)
        wait_for(lambda: process_state(child.pid) == "Z", 10, "the child to be a zombie")
        assert not pid_alive(child.pid)  # exited, not yet reaped
    finally:
        child.kill()
        child.wait()
    assert process_state(child.pid) is None and not pid_alive(child.pid)


def test_a_command_name_with_parentheses_and_spaces_is_skipped() -> None:
    """The command name in /proc/PID/stat is `(comm)` and may hold `) ` itself: the state is
    the field after the last `)`."""
    child = subprocess.Popen([sys.executable, "-c", "import sys, ctypes; "
                              "ctypes.CDLL(None).prctl(15, b'x) Z (y', 0, 0, 0); sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        wait_for(lambda: "x) Z (y" in open(f"/proc/{child.pid}/stat").read(), 10, "the child's new name")
        assert process_state(child.pid) in ("R", "S") and pid_alive(child.pid)
    finally:
        child.kill()
        child.wait()
