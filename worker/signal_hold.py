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
Python handler (SIG_DFL, SIG_IGN) are the kernel's, and never held. An exception another
thread raises into the main thread (`interrupt_main`: an interrupted pdb command, in a program
with a SIGINT handler of its own) is held the same way.

It calls `_signal`, the C module, not `signal`, whose wrappers turn each handler into an enum
member if they can: 3-4 us a call against 0.02-0.3 us, twice on every command of pdb's thread.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (signal's C module: no stubs; the docstring says why)
import contextlib
import ctypes
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
    deferred: type[BaseException] | None = None  # an exception `interrupt_main` asked for while held
    # The main thread's entering and leaving of the outermost hold, against `interrupt_main`: taken
    # as a plain lock's `with`, which no exception raised between two bytecodes can leave taken.
    lock = threading.Lock()


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
        if _Hold.depth:
            _Hold.depth += 1
            return
        counted = False
        try:
            with _Hold.lock:  # from here on `interrupt_main` defers its exception to the hold's end
                _Hold.depth = 1
                counted = True
            for signum in _SIGNALS:
                handler = _signal.getsignal(signum)
                if callable(handler):
                    _Hold.handlers[signum] = handler
                    _signal.signal(signum, _note)
        except BaseException:  # raised between two bytecodes before the hold began: none stays held
            try:
                _give_back(_Hold.handlers)
            finally:
                if counted:
                    _leave()
            raise

    def __exit__(self, *_: object) -> None:
        if not self._main:
            return
        if _Hold.depth > 1:
            _Hold.depth -= 1
            return
        try:
            handlers = dict(_Hold.handlers)
            _give_back(handlers)
            _run(handlers)
        finally:
            deferred = _leave()
        if deferred is not None:
            raise deferred


def _leave() -> type[BaseException] | None:
    """The outermost hold is over; the exception `interrupt_main` deferred meanwhile, if any."""
    with _Hold.lock:
        _Hold.depth = 0
        deferred, _Hold.deferred = _Hold.deferred, None
    return deferred


def raise_in_thread(thread_id: int, exception: type[BaseException]) -> None:
    """Make `thread_id` raise `exception` at its next function call or loop iteration.

    (Never withdrawn with NULL: CPython 3.11 then leaves its eval breaker set for good.)
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exception))


def interrupt_main(exception: type[BaseException]) -> None:
    """Raise `exception` in the main thread (from another), at its next bytecode or, while it
    is held, where the hold ends or its poll is woken (`run_caught`): never inside meshdbg's
    transport, where it would leave a stream half-updated or a lock taken for good."""
    with _Hold.lock:
        if not _Hold.depth:
            raise_in_thread(threading.main_thread().ident or 0, exception)
            return
        _Hold.deferred, wake = exception, _Hold.wake
    if wake is not None:
        wake()


def program_handler(signum: int) -> Any:
    """The Python handler the program has for `signum`, held or not: from another thread,
    which must know whether a signal it sends the main thread runs Python's own handler
    (meshdbg.worker.pdb_wrapper). `_Hold.handlers` keeps the program's handlers for as long
    as `_note` stands in for them (it is emptied only once they are back)."""
    handler = _signal.getsignal(signum)
    return _Hold.handlers.get(signum, handler) if handler is _note else handler


def pending() -> bool:
    """A signal came while held, and its handler has not run yet (or `interrupt_main` came)."""
    return bool(_Hold.caught) or _Hold.deferred is not None


def run_caught() -> None:
    """Run the handlers of the signals that came (held still), as a safe point: an exception
    of theirs, or the one `interrupt_main` deferred, is raised from here."""
    _run(_Hold.handlers)
    with _Hold.lock:
        deferred, _Hold.deferred = _Hold.deferred, None
    if deferred is not None:
        raise deferred


@contextlib.contextmanager
def waking(wake: Callable[[], None]) -> Iterator[None]:
    """Held, with `wake` called when a signal comes (a poll to end, for its handler to run)."""
    with Held():
        previous, _Hold.wake = _Hold.wake, wake
        try:
            yield
        finally:
            _Hold.wake = previous


def _give_back(handlers: dict[int, Any]) -> None:
    """Put the program's `handlers` back (then `_Hold.handlers` is empty). When one raises as
    it is put back (Python runs a pending signal's handler then), every handler is given back
    first, and the signals noted are raised again in the thread, for Python to run as it
    would have."""
    raised: BaseException | None = None
    for signum, handler in handlers.items():
        try:
            _signal.signal(signum, handler)  # (runs the handler of a signal pending now)
        except BaseException as exc:
            raised = raised or exc
    _Hold.handlers = {}
    if raised is not None:
        for signum in dict.fromkeys(_Hold.caught):
            signal.pthread_kill(threading.get_ident(), signum)
        _Hold.caught = []
        raise raised


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
