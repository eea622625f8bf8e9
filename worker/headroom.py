"""Room on the stack for meshdbg's own frames, so that a stop works as deep as local pdb's.

Local pdb stops a program a few dozen frames short of its recursion limit. meshdbg's first
stop in a process imports its worker side (gRPC, protobuf, its modules) and opens a stream
from there, some fifty frames deeper: a `breakpoint()` deep in a recursion that local pdb
stopped at raised RecursionError into the program instead, and a rank that did not catch it
died. While meshdbg's own code opens a session (`Headroom()`), the recursion limit is raised
by EXTRA_FRAMES and put back after; pdb's commands, which run the program's code, run under
the program's own limit, as in local pdb.

The limit is the interpreter's: threads that open sessions at once share one raise, put back
when the last is done. It is put back only if no one changed it meanwhile (the program, from
another thread), and, when the thread that would put it back is itself deeper than the old
limit (it stopped in its last frames), by the next one that can.
"""

from __future__ import annotations

import sys
import threading

EXTRA_FRAMES = 250  # well above what opening a session needs (about 50 frames)


class _Raise:
    """The raise under way (its lock held to change it)."""

    lock = threading.Lock()
    holders = 0  # the `Headroom` blocks inside it
    base = 0  # the limit before it
    raised = False  # the limit is base + EXTRA_FRAMES, of ours, not put back yet


class Headroom:
    """`with Headroom():` the recursion limit is EXTRA_FRAMES higher inside (re-entrant,
    and shared between threads)."""

    __slots__ = ()

    def __enter__(self) -> None:
        with _Raise.lock:
            if not _Raise.raised:
                _Raise.base = sys.getrecursionlimit()
                sys.setrecursionlimit(_Raise.base + EXTRA_FRAMES)
                _Raise.raised = True
            _Raise.holders += 1

    def __exit__(self, *_: object) -> None:
        with _Raise.lock:
            _Raise.holders -= 1
            if _Raise.holders or not _Raise.raised:
                return
            if sys.getrecursionlimit() != _Raise.base + EXTRA_FRAMES:  # the program set its own since
                _Raise.raised = False
                return
            try:
                sys.setrecursionlimit(_Raise.base)
            except RecursionError:  # this thread is deeper than that: the next block to end puts it back
                return
            _Raise.raised = False
