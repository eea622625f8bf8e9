"""The main thread's Python signal handlers, held while meshdbg's transport code runs in it.

CPython runs a signal's Python handler in the main thread between two bytecodes, wherever that
thread is. One that raises there (SIGINT's KeyboardInterrupt, a program's own handler's) in the
middle of a send or of gRPC's poll leaves the session's stream half-updated: a send noted but
not started, a batch started but not counted, a queue gRPC destroyed (meshdbg.worker.polled),
and the stop stops answering. While the main thread is inside that code (`Held`, which nests),
each Python handler is replaced by one that notes the signal and wakes a waiting poll
(`waking`); the handlers noted run where an exception is safe: when the outermost hold ends, or
when a poll ends (`run_caught`), and pdb's command loop then shows SIGINT's KeyboardInterrupt
as `--KeyboardInterrupt--` while the stop goes on, as local pdb's does. Signals without a
Python handler (SIG_DFL, SIG_IGN) are the kernel's, and never held.

It calls `_signal`, the C module, not `signal`, whose wrappers turn each handler into an enum
member if they can: 3-4 us a call against 0.02-0.3 us, twice on every command of pdb's thread.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (signal's C module: no stubs; the docstring says why)
import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Callable, Iterator

_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})


class _Hold:
    """What is held now (the main thread's only: no lock)."""

    depth = 0
    handlers: dict[int, Any] = {}  # the program's handlers, by signal, while held
    caught: list[int] = []  # signals noted, in order
    frame: FrameType | None = None  # where the last one arrived
    wake: Callable[[], None] | None = None  # what ends the poll under way, if one is


def _note(signum: int, frame: FrameType | None) -> None:
    _Hold.caught.append(signum)
    _Hold.frame = frame
    if _Hold.wake is not None:
        _Hold.wake()


class Held:
    """`with Held():` the main thread's Python signal handlers are held until the outermost
    hold ends, where those of the signals that came run (an exception of theirs is raised
    there). On any other thread, nothing (only the main thread runs Python handlers)."""

    __slots__ = ("_main",)

    def __enter__(self) -> None:
        self._main = threading.current_thread() is threading.main_thread()
        if not self._main:
            return
        if not _Hold.depth:
            for signum in _SIGNALS:
                handler = _signal.getsignal(signum)
                if callable(handler):
                    _Hold.handlers[signum] = handler
                    _signal.signal(signum, _note)
        _Hold.depth += 1

    def __exit__(self, *_: object) -> None:
        if not self._main:
            return
        _Hold.depth -= 1
        if _Hold.depth:
            return
        handlers, _Hold.handlers = _Hold.handlers, {}
        raised: BaseException | None = None
        for signum, handler in handlers.items():
            try:
                _signal.signal(signum, handler)  # (runs the handler of a signal pending now)
            except BaseException as exc:  # that handler raised: every handler is given back first
                raised = raised or exc
        if raised is not None:
            for signum in dict.fromkeys(_Hold.caught):  # for Python to run as it would have
                signal.pthread_kill(threading.get_ident(), signum)
            _Hold.caught = []
            raise raised
        _run(handlers)


def pending() -> bool:
    """A signal came while held, and its handler has not run yet."""
    return bool(_Hold.caught)


def run_caught() -> None:
    """Run the handlers of the signals that came (held still), as a safe point: an exception
    of theirs is raised from here."""
    _run(_Hold.handlers)


@contextlib.contextmanager
def waking(wake: Callable[[], None]) -> Iterator[None]:
    """Held, with `wake` called when a signal comes (a poll to end, for its handler to run)."""
    with Held():
        previous, _Hold.wake = _Hold.wake, wake
        try:
            yield
        finally:
            _Hold.wake = previous


def _run(handlers: dict[int, Any]) -> None:
    """Run the handlers of the signals noted, in order, each once (as the kernel delivers a
    signal pending twice); when one raises, the later ones are raised again in the thread,
    for Python to run as it would have."""
    caught, _Hold.caught = list(dict.fromkeys(_Hold.caught)), []
    for index, signum in enumerate(caught):
        try:
            if signum in handlers:
                handlers[signum](signum, _Hold.frame)
        except BaseException:
            for later in caught[index + 1:]:
                signal.pthread_kill(threading.get_ident(), later)
            raise
