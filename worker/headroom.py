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
from typing import ClassVar

from meshdbg.worker.shared_hold import SharedHold

EXTRA_FRAMES = 250  # well above what opening a session needs (about 50 frames)


class Headroom(SharedHold):
    """`with Headroom():` the recursion limit is EXTRA_FRAMES higher inside (re-entrant,
    and shared between threads)."""

    __slots__ = ()
    base: ClassVar[int] = 0  # the limit before the raise
    raised: ClassVar[bool] = False  # the limit is base + EXTRA_FRAMES, of ours, not put back yet

    @classmethod
    def take(cls) -> None:
        if not cls.raised:  # (else a raise not put back yet, by a thread that ended deeper than `base`)
            cls.base = sys.getrecursionlimit()
            sys.setrecursionlimit(cls.base + EXTRA_FRAMES)
            cls.raised = True

    @classmethod
    def give_back(cls) -> None:
        if sys.getrecursionlimit() != cls.base + EXTRA_FRAMES:  # the program set its own since
            cls.raised = False
            return
        try:
            sys.setrecursionlimit(cls.base)
        except RecursionError:  # this thread is deeper than that: the next block to end puts it back
            return
        cls.raised = False
