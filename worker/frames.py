"""Which frames are meshdbg's own, so that pdb shows and stops in the user's code only.

A worker started by `meshdbg run` runs the user's script under the fork server, the bootstrap
and runpy; a thread runs it under threading's bootstrap. Local `python script.py` shows none
of meshdbg's frames, so neither does a remote session: `where` starts at the user's
outermost frame, stepping never stops in meshdbg's code (nor in what it calls), and stepping
off the end of the user's outermost frame ends the session instead of wandering into those
internals.
"""

from __future__ import annotations

import os
import runpy
import threading
from types import CodeType, FrameType
from typing import Mapping

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# meshdbg's machinery; worker/pipelining is a library the user's code calls, so it stays visible
_OWN = tuple(os.path.join(_PACKAGE, part) for part in ("worker" + os.sep, "wire" + os.sep, "debugger" + os.sep,
                                                       "__init__.py", "__main__.py"))
_LIBRARY = os.path.join(_PACKAGE, "worker", "pipelining") + os.sep
_RUNPY = {runpy.__file__, "<frozen runpy>"}
# the frames that start a thread and run its target: the user's code ends where they begin
_THREAD_START: set[CodeType] = {threading.Thread.run.__code__,
                                threading.Thread._bootstrap_inner.__code__,  # type: ignore[attr-defined]  # private
                                threading.Thread._bootstrap.__code__}  # type: ignore[attr-defined]  # private


def is_internal(frame: FrameType) -> bool:
    """A frame of meshdbg's machinery or of runpy (what meshdbg's bootstrap runs a script with)."""
    return is_internal_file(frame.f_code.co_filename)


def is_internal_file(filename: str) -> bool:
    """is_internal for a frame known by its file only (a py-spy sample, `meshdbg stacks`)."""
    return filename in _RUNPY or _is_own_file(filename)


def is_own(frame: FrameType) -> bool:
    """A frame of meshdbg's machinery itself; not runpy's, which a launcher of the user's own
    (a profiler's, a wrapper's) runs the user's script with too."""
    return _is_own_file(frame.f_code.co_filename)


def _is_own_file(filename: str) -> bool:
    return filename.startswith(_OWN) and not filename.startswith(_LIBRARY)


def is_outermost_user_frame(frame: FrameType) -> bool:
    """Nothing of the user's runs below `frame`: returning from it ends the user's code on
    this thread (the module ran to its end, or the thread's target returned)."""
    caller = frame.f_back
    return caller is None or is_internal(caller) or caller.f_code in _THREAD_START


def is_meshdbg_call(frame: FrameType) -> bool:
    """`frame` is meshdbg's, or runs inside a call the user's code made into meshdbg (the
    breakpoint hook and what it calls: importlib, pdb's own `__init__`, gRPC): stepping
    (`s` on a `breakpoint()` line) goes over those as over a C function.

    runpy between a user's frames is no call into meshdbg: a launcher of the user's own that
    runs the script with `runpy.run_path` (a profiler's, a wrapper's) had every frame of the
    script taken for meshdbg's, and its `breakpoint()` never stopped."""
    if is_internal(frame):
        return True
    inside = False
    caller: FrameType | None = frame
    while caller is not None:
        filename = caller.f_code.co_filename
        if _is_own_file(filename):
            inside = True
        elif inside and filename not in _RUNPY:
            return True  # a user frame called meshdbg, which (in the end) called `frame`
        caller = caller.f_back
    return False


class FrameWithLocals:
    """`frame` as pdb's formatting reads it, with `f_locals` standing for pdb's own copy of them.

    On 3.11 and 3.12 each read of a function frame's `f_locals` refreshes the dict pdb edits
    (`curframe_locals`) from the frame's fast locals, undoing a `!x = 99` not yet written back;
    anything of meshdbg's that describes the frame pdb shows reads its locals through this.
    """

    def __init__(self, frame: FrameType, f_locals: Mapping[str, object]) -> None:
        self._frame = frame
        self.f_locals = f_locals

    def __getattr__(self, name: str) -> object:
        return getattr(self._frame, name)


def innermost_user_frame(frame: FrameType | None) -> FrameType | None:
    """`frame` or the nearest caller of it that is not meshdbg's."""
    while frame is not None and is_internal(frame):
        frame = frame.f_back
    return frame
