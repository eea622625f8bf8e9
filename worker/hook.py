"""The remote breakpoint hook: `breakpoint()` in a worker opens a meshdbg session.

Reached through `PYTHONBREAKPOINT=meshdbg.worker.remote_breakpointhook` or `meshdbg.worker.install()`. When
no server can be reached the worker does not hang: it says why on stderr, then falls back to
local pdb if it has a terminal, else continues.
"""

from __future__ import annotations

import functools
import os
import pdb
import sys
from types import CodeType, FrameType, ModuleType, TracebackType
from typing import Any, Callable, Mapping

from meshdbg.worker import dependencies  # noqa: F401  (first: gRPC and protobuf as installed, not the job's)
from meshdbg.worker import autostart
from meshdbg.wire.connection import resolve_connection
from meshdbg.wire.environment import breakpoints_off
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.vocabulary import StopReason
from meshdbg.worker.context import current_context
from meshdbg.worker.headroom import Headroom
from meshdbg.worker.identity import detect_identity, session_identity
from meshdbg.worker.pdb_wrapper import PdbWrapper, active_debugger, ending_debugger, stop_with_header
from meshdbg.worker.notices import say, say_once
from meshdbg.worker.remote import RemoteSession
from meshdbg.worker.stacks import in_post_mortem
from meshdbg.worker.stdio_numbers import StandardNumbersHeld
from meshdbg.worker.stop_opening import OPENING


def open_session(reason: StopReason, labels: Mapping[str, str] | None = None) -> RemoteSession:
    """A new session stream for the calling thread, labelled with `labels` (default: the
    thread's current context); raises MeshdbgError when unreachable."""
    labels = current_context() if labels is None else labels
    # (the stop may be deep in a recursion: meshdbg.worker.headroom; the program's stdout closed:
    # meshdbg.worker.stdio_numbers)
    before, OPENING.now = OPENING.now, True
    try:
        with Headroom(), StandardNumbersHeld():
            return RemoteSession(resolve_connection, session_identity(detect_identity(), reason, labels))
    finally:
        OPENING.now = before


def _fall_back(frame: FrameType, problem: str, header: str | None) -> None:
    if sys.stdin is not None and sys.stdin.isatty():
        say(f"meshdbg: {problem}\nmeshdbg: using local pdb instead\n")
        stop_with_header(pdb.Pdb(), frame, header)
    else:
        say_once(f"meshdbg: {problem}\nmeshdbg: no terminal for local pdb; continuing\n")


def stop_at(frame: FrameType, reason: StopReason, header: str | None = None, like: pdb.Pdb | None = None) -> None:
    """Stop `frame` in a remote pdb session opened for `reason` (a breakpoint, an interrupt),
    pdb printing `header` first (`breakpoint(header=...)`, as `pdb.set_trace`'s); `like`: the
    pdb the program made, whose choices (`skip=`, its `.pdbrc`) the session's pdb keeps.

    When this thread's pdb is already running a command in a session (`n` onto a
    `breakpoint()` line, an interrupt during `n` over a long loop), the stop happens in that
    same session, as local pdb stops in the same terminal. A `breakpoint()` inside a pdb
    command (`p f()`) is not a new stop: local pdb would not stop there either.

    An interrupt that comes while this thread's pdb still ends its session (its `c` has gone
    out and the console said so; the program's stdout is slow to flush, the machine is
    loaded) stops at the program's next line through that pdb: a session opened here, inside
    its trace function, never stopped (the function's return put the ended pdb back on the
    frame), and the console waited for good. One asked for while this thread opens a stop
    is that stop (meshdbg.worker.stop_opening).
    """
    if OPENING.now:
        return
    OPENING.now = True
    try:
        _stop_at(frame, reason, header, like)
    finally:
        OPENING.now = False


def _stop_at(frame: FrameType, reason: StopReason, header: str | None, like: pdb.Pdb | None) -> None:
    current = active_debugger() or (ending_debugger() if reason is StopReason.INTERRUPT else None)
    if current is not None:
        if current.stopped:
            return
        if reason is StopReason.INTERRUPT:
            current.break_in(frame, functools.partial(open_session, reason))
        else:
            current.hand_over(frame, functools.partial(open_session, reason), header, like)
        return
    try:
        remote = open_session(reason)
    except MeshdbgError as exc:
        # Fall back only once the exception (and the objects its traceback holds) is gone:
        # a finalizer running after local pdb starts tracing would be where pdb stops.
        problem = str(exc)
    except Exception as exc:  # breakpoint() must never raise into the user's program
        problem = f"cannot open a debug session ({type(exc).__name__}: {exc})"
    else:
        debugger = PdbWrapper(functools.partial(open_session, reason), remote, like)
        if reason is StopReason.INTERRUPT:  # (Ctrl-C after `c` in local pdb says so above the position)
            debugger.note_interrupted()
        stop_with_header(debugger, frame, header)
        return
    _fall_back(frame, problem, header)


def stop_in_next_call(matches: Callable[[FrameType], bool], reason: StopReason) -> Callable[[], None]:
    """Stop at the first line of the next call in this thread whose frame `matches` (a pipeline
    stage's `forward`, a script's module code, whose frame does not exist yet), through a
    call-only trace function until then. Returns a function that forgets the stop if the call
    never came. Only when this thread has no trace function of its own (pdb, coverage): it
    replaces it."""
    def on_call(frame: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        if event != "call" or not matches(frame):
            return None  # nothing traced inside other calls
        sys.settrace(None)
        stop_at(frame, reason)
        return frame.f_trace  # pdb's, if it now traces this frame

    def forget() -> None:
        if sys.gettrace() is on_call:
            sys.settrace(None)

    sys.settrace(on_call)
    return forget


def remote_breakpointhook(*args: object, header: str | None = None, **kwargs: object) -> None:
    """Stop the calling frame in a remote pdb session (a drop-in `sys.breakpointhook`);
    `breakpoint(header="...")` has pdb print the header first, as `pdb.set_trace(header=...)`."""
    stop_at(sys._getframe(1), StopReason.BREAKPOINT, header)


def post_mortem(traceback: TracebackType, labels: Mapping[str, str] | None = None,
                reason: StopReason = StopReason.POST_MORTEM) -> None:
    """Open a "post-mortem" session on `traceback`; returns when the user continues.

    `labels` describe where the error was raised (see meshdbg.worker.context.context_of);
    `reason`: a crash's (meshdbg's own post-mortem of an uncaught exception) or the program's
    own `pdb.post_mortem()`. When no server is reachable it says so on stderr and returns at once.
    """
    debugger = PdbWrapper(functools.partial(open_session, reason, labels))
    debugger.reset()
    with in_post_mortem(traceback):  # `meshdbg stacks` shows where it crashed
        debugger.interaction(None, traceback)


def install() -> None:
    """Make plain `breakpoint()` in this process use meshdbg, and `import pdb; pdb.set_trace()`,
    `pdb.post_mortem()` and `pdb.Pdb().set_trace()` too: a rank of `meshdbg run` has no
    terminal for local pdb, which read the end of its input (set_trace's quit with BdbQuit and
    failed the rank, and with it the whole mesh; post_mortem's went on as if nothing had been asked)."""
    if not breakpoints_off(os.environ):  # (PYTHONBREAKPOINT=0: breakpoint() does nothing, as Python's)
        sys.breakpointhook = remote_breakpointhook
    route_pdb(pdb)


def route_pdb(pdb_module: ModuleType) -> None:
    """`pdb_module.set_trace()` and `.post_mortem()` open meshdbg sessions from now on, and so
    does the `set_trace` of a `pdb.Pdb` the program makes itself where it would read a stdin
    with no terminal behind it (`_route_instances`)."""
    setattr(pdb_module, "set_trace", remote_breakpointhook)  # (called as breakpoint() calls its hook)
    setattr(pdb_module, "post_mortem", pdb_post_mortem)
    _route_instances(pdb_module.Pdb)


_ROUTED = "_meshdbg_routed"  # on our set_trace of pdb.Pdb: never wrapped twice


def _route_instances(pdb_class: type[pdb.Pdb]) -> None:
    """`pdb.Pdb(skip=[...]).set_trace()`, or a subclass's (ipdb's debugger is one), stops in a
    meshdbg session when that pdb would read this process's stdin and no terminal is behind
    it: local pdb read the end of its input at once and quit, raising BdbQuit into the program.
    One with a stdin of its own (a socket's, a script of lines) or a terminal is left to itself,
    as are meshdbg's own."""
    original = pdb_class.set_trace  # bdb.Bdb's before 3.13
    if getattr(original, _ROUTED, False):
        return
    original = getattr(original, autostart.LOCAL, original)  # (meshdbg.pth's stand-in: what it stood in for)

    @functools.wraps(original)
    def set_trace(self: pdb.Pdb, frame: FrameType | None = None, **kwargs: Any) -> None:
        if isinstance(self, PdbWrapper) or not _reads_no_terminal(self):
            original(self, frame, **kwargs)
        else:
            stop_at(frame or sys._getframe(1), StopReason.BREAKPOINT, like=self)

    setattr(set_trace, _ROUTED, True)
    setattr(pdb_class, "set_trace", set_trace)


def _reads_no_terminal(debugger: pdb.Pdb) -> bool:
    """`debugger` reads its lines from this process's stdin, which has no terminal behind it."""
    stdin = sys.stdin
    if debugger.stdin is not stdin:
        return False
    try:
        return stdin is None or not stdin.isatty()
    except (ValueError, OSError):  # closed
        return True


def pdb_post_mortem(t: TracebackType | BaseException | None = None) -> None:
    """`pdb.post_mortem()` where meshdbg is installed: a post-mortem session on `t` (a
    traceback, or on 3.13 an exception), else on the exception being handled, as pdb's."""
    if isinstance(t, BaseException):
        t = t.__traceback__
    if t is None:
        t = sys.exc_info()[2]
    if t is None:  # (pdb's own words)
        raise ValueError("A valid traceback must be passed if no exception is being handled")
    post_mortem(t, reason=StopReason.POST_MORTEM_CALL)  # asked for, as a breakpoint(): not a crash
