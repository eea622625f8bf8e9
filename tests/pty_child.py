"""A program on a pseudo-terminal of its own, driven with pexpect, started with no Python between fork and exec.

`pexpect.spawn` forks the test process and runs Python in the child before it execs. A test
process has other threads (gRPC's, pytest-xdist's execnet reader), and a child forked while one of
them held a lock can block on it forever: the test then hangs inside `spawn`. `subprocess` forks
and execs in C, and `setsid --ctty` makes the pty the child's controlling terminal, so Ctrl-C,
hangups and job control reach it as in a terminal.
"""

from __future__ import annotations

import fcntl
import io
import os
import signal
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence

from pexpect import fdpexpect

# How long `close` lets the child end by itself after the hangup, then after SIGHUP/SIGCONT/SIGINT.
CLOSE_GRACE_S = 2.0


def _control_byte(char: str) -> str:
    """The byte a terminal sends for Ctrl plus `char`, as `pexpect.spawn.sendcontrol` maps it."""
    if char == "?":
        return "\x7f"
    return chr(ord(char.upper()) & 0x1F)


class PtyChild(fdpexpect.fdspawn):
    """`argv` running on a new pty as its session leader, read and written through pexpect; all it
    printed so far is in `logfile_read.getvalue()`.

    Keeps the parts of `pexpect.spawn` the tests use: `pid`, `env`, `sendintr`, `sendcontrol`, `sendeof`,
    `isalive`, `wait`, `close(force)`, `exitstatus` and `signalstatus`.
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], timeout: float = 30,
                 dimensions: tuple[int, int] = (24, 80), echo: bool = True, cwd: str | None = None) -> None:
        self.env = dict(env)
        parent_end, child_end = os.openpty()
        rows, columns = dimensions
        fcntl.ioctl(child_end, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        if not echo:
            attributes = termios.tcgetattr(child_end)
            attributes[3] &= ~termios.ECHO
            termios.tcsetattr(child_end, termios.TCSANOW, attributes)
        try:
            self.process = subprocess.Popen(["setsid", "--ctty", *argv], stdin=child_end, stdout=child_end,
                                            stderr=child_end, env=self.env, cwd=cwd)
        except BaseException:
            os.close(parent_end)
            raise
        finally:
            os.close(child_end)  # else reading our end never sees the child's end close
        super().__init__(parent_end, timeout=timeout, encoding="utf-8")
        self.logfile_read = io.StringIO()
        self.pid = self.process.pid
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None

    def __str__(self) -> str:
        """What a failed expect shows: the command and the end of what it printed."""
        return f"{' '.join(self.process.args)} (pid {self.pid}) printed, last 2000 characters:\n" \
               f"{self.logfile_read.getvalue()[-2000:]!r}"

    def sendcontrol(self, char: str) -> int:
        return self.send(_control_byte(char))

    def sendintr(self) -> None:
        self.sendcontrol("c")

    def sendeof(self) -> None:
        self.sendcontrol("d")

    def isalive(self) -> bool:
        return self.process.poll() is None

    def wait(self) -> int | None:
        """Wait for the child to end and return its exit status (None when a signal ended it)."""
        self._record(self.process.wait())
        return self.exitstatus

    def close(self, force: bool = True) -> None:
        """Hang up the terminal and reap the child: as `pexpect.spawn.close`, SIGKILL last if `force`."""
        if not self.closed:
            super().close()
        for signals in ((), (signal.SIGHUP, signal.SIGCONT, signal.SIGINT)):
            for signum in signals:
                self._signal(signum)
            try:
                self._record(self.process.wait(CLOSE_GRACE_S))
                return
            except subprocess.TimeoutExpired:
                pass
        if not force:
            raise RuntimeError(f"pid {self.pid} did not end on hangup, SIGHUP or SIGINT")
        self._signal(signal.SIGKILL)
        self._record(self.process.wait())

    def _signal(self, signum: int) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signum)

    def _record(self, returncode: int) -> None:
        self.exitstatus = returncode if returncode >= 0 else None
        self.signalstatus = -returncode if returncode < 0 else None
