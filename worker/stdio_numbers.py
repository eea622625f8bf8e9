"""meshdbg's descriptors kept off the numbers of the program's standard ones (0, 1, 2).

A process whose fd 1 or 2 is closed (a daemon's, `python job.py >&- 2>&-`) gives the lowest
free number to the next descriptor opened, so meshdbg's socket, poller or pipes took them: the
program's next write to its stdout would have gone into meshdbg's stream, and the output capture
(meshdbg.worker.fd_capture) put its pipe over gRPC's descriptor. gRPC's poller then failed at
every turn, logging thousands of lines a second into the session, and the stop never answered.

So meshdbg's own descriptors are made above 2: those it makes itself are moved there
(`above_standard`), and while gRPC makes its own (a session's stream opens, `meshdbg run`'s
agent connects) each standard number that is closed is held on /dev/null (`StandardNumbersHeld`)
and let go after. The program's descriptors stay as it left them: one that closed its stdout
and opens a file next still gets fd 1 for it, as without meshdbg. (A descriptor gRPC opens later
by itself, reconnecting while the stream is idle, is not covered.)

A number the program closed may also be taken by the program's own descriptor: an asyncio loop
made after the close gets its self-pipe, a non-blocking socket pair, as fd 1 and 2. That is not
a stream the program prints to, and the output capture must leave it alone (`printed_to`).
"""

from __future__ import annotations

import fcntl
import os
import stat
from typing import ClassVar

from meshdbg.worker.shared_hold import SharedHold

STANDARD = (0, 1, 2)


def above_standard(fd: int) -> int:
    """`fd`, or, when it is a standard number (which was closed), a copy of it above 2 with
    `fd` closed again. Close-on-exec, as Python makes its descriptors."""
    if fd not in STANDARD:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, len(STANDARD))
    os.close(fd)
    return moved


def printed_to(fd: int) -> bool:
    """Whether `fd` is open on something a program prints to. Not a non-blocking socket (an
    event loop's self-pipe, the program's own connection; a stdout a parent hands over as a
    socket, systemd's journal or libuv's, is blocking: print would fail on it otherwise), nor
    an anonymous inode (an eventfd, as uvloop wakes its loop with, epoll, timerfd). Putting the
    capture's pipe over an asyncio loop's self-pipe made its next turn fail, and with it the rank."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:  # closed
        return False
    if stat.S_ISSOCK(mode):
        return os.get_blocking(fd)
    return stat.S_IFMT(mode) != 0


def pipe_above_standard() -> tuple[int, int]:
    """os.pipe(), both ends numbered above 2 (close-on-exec, as os.pipe makes them)."""
    read, write = os.pipe()
    return above_standard(read), above_standard(write)


def dup_above_standard(fd: int) -> int:
    """A close-on-exec copy of `fd` numbered above 2 (os.dup's would take a closed standard number)."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, len(STANDARD))


class StandardNumbersHeld(SharedHold):
    """`with StandardNumbersHeld():` each closed standard number is open on /dev/null inside,
    so that no descriptor made meanwhile takes it; closed again after (shared between threads:
    let go when the last is done)."""

    __slots__ = ()
    numbers: ClassVar[list[int]] = []  # the standard numbers held now

    @classmethod
    def take(cls) -> None:
        cls.numbers = [fd for fd in STANDARD if _hold_if_closed(fd)]

    @classmethod
    def give_back(cls) -> None:
        for fd in cls.numbers:
            os.close(fd)
        cls.numbers = []


def _hold_if_closed(fd: int) -> bool:
    """Open /dev/null on `fd` if it is closed; whether it was."""
    try:
        os.fstat(fd)
        return False
    except OSError:
        pass
    opened = os.open(os.devnull, os.O_RDWR)  # the lowest free number: `fd`, those below it being open or held
    if opened != fd:  # another thread took `fd` meanwhile
        os.close(opened)
        return False
    return True
