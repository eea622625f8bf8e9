"""A signal that comes while the main thread waits in gRPC's poll ends the poll at once.

gRPC's poll looks for signals every 200 ms (a constant of its Cython), so a program's signal
handler ran 0.2 s late while its main thread sat at pdb's prompt (measured: 201.6 ms, time after
time), where local pdb's `input()` is interrupted at once. Python's C-level handler writes each
signal's number to the wakeup fd (`signal.set_wakeup_fd`) the moment it comes, whatever the main
thread is doing. While the main thread polls (`Watching`), that fd is a pipe of this module's: a
thread reads it, ends the poll (the `wake` it was given) and hands each byte on to the program's
own wakeup fd, if it has one (an asyncio loop learns there which of its signals came).
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Callable

from meshdbg.worker.process_id import this_pid
from meshdbg.worker.stdio_numbers import pipe_above_standard

_READ_BYTES = 256


class _State:
    """This process's pipe and its reader thread, and what a signal wakes now."""

    pid = -1  # the process the pipe and the thread are this one's in (a forked child makes its own)
    read = -1
    write = -1  # what the wakeup fd is while the main thread polls (-1: none could be made)
    wake: Callable[[], None] | None = None  # ends the main thread's poll under way
    forward = -1  # the program's own wakeup fd, as of the last poll (-1: none)


def _forked_child() -> None:
    """A child forked (by another thread) while the main thread polled has the parent's pipe as
    its wakeup fd: its signals would wake its parent's poll and reach its parent's loop. The
    program's own is put back (the forking thread is the child's main thread now), and the
    parent's pipe closed: the child makes its own if it polls."""
    if _State.wake is not None:
        try:
            signal.set_wakeup_fd(_State.forward)
        except (ValueError, OSError):
            pass
    for fd in (_State.read, _State.write):
        if fd >= 0:
            os.close(fd)
    _State.pid, _State.read, _State.write, _State.wake, _State.forward = -1, -1, -1, None, -1


os.register_at_fork(after_in_child=_forked_child)


def _started() -> int:
    """The pipe's write end, with its reader running in this process (-1: none could be made)."""
    if _State.pid == this_pid() and _State.write >= 0:
        return _State.write
    _State.pid = this_pid()
    try:
        read, write = pipe_above_standard()
    except OSError:  # out of descriptors: the poll's own look, every 200 ms
        return -1
    os.set_blocking(write, False)  # (set_wakeup_fd requires it)
    _State.read, _State.write = read, write
    threading.Thread(target=_relay, args=(read,), name="meshdbg-signals", daemon=True).start()
    return write


def _relay(read: int) -> None:
    """Each signal's byte: on to the program's wakeup fd, then wake the poll."""
    while True:
        try:
            data = os.read(read, _READ_BYTES)
        except InterruptedError:
            continue
        except OSError:  # closed under it (a forked child's copy): nothing more to read
            return
        if not data:
            return
        forward = _State.forward
        if forward >= 0:
            try:
                os.write(forward, data)
            except OSError:  # full or closed: dropped, as Python's own write would have been
                pass
        wake = _State.wake
        if wake is not None:
            try:
                wake()
            except Exception:  # (the poll ended meanwhile): the relay lives on for the program's fd
                pass


def _stand_in() -> int | None:
    """Make the pipe the wakeup fd; the program's own (-1: none), or None when it cannot be
    (no descriptor left for the pipe, not the main interpreter's main thread)."""
    write = _started()
    if write < 0:
        return None
    try:
        return signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except (ValueError, OSError):
        return None


def relaying() -> bool:
    """A signal that comes now wakes the main thread's poll from the relay thread."""
    return _State.wake is not None and _State.pid == this_pid()


class Watching:
    """`with Watching(wake):` in the main thread: inside, a signal with a Python handler calls
    `wake` (from another thread) the moment it comes. The program's wakeup fd is given back
    after, with warn_on_full_buffer at its default (it cannot be read back). A class, not a
    generator: pdb's thread enters it at every wait (issue 22)."""

    __slots__ = ("_wake", "_previous")

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._previous: int | None = None

    def __enter__(self) -> None:
        previous = self._previous = _stand_in()
        if previous is not None:  # (else the poll's own look, every 200 ms)
            _State.forward, _State.wake = previous, self._wake

    def __exit__(self, *_: object) -> None:
        if self._previous is not None:
            _State.wake = None
            signal.set_wakeup_fd(self._previous)
