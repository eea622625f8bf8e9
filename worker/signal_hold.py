"""The main thread's Python signal handlers, held while meshdbg's transport code runs in it.

CPython runs a signal's Python handler in the main thread between two bytecodes, wherever that
thread is. One that raises there (SIGINT's KeyboardInterrupt, a program's own handler's) in the
middle of a send or of gRPC's poll leaves the session's stream half-updated: a send noted but
not started, a batch started but not counted, a queue gRPC destroyed (meshdbg.worker.polled),
and the stop stops answering. While the main thread is inside that code (`Held`, which nests),
each Python handler is replaced by one that notes the signal and wakes a waiting poll
(`Waking`); the handlers noted run where an exception is safe: when the outermost hold ends, or
when a poll ends (`run_caught`), and pdb's command loop then shows SIGINT's KeyboardInterrupt
as `--KeyboardInterrupt--` while the stop goes on, as local pdb's does. Signals without a
Python handler (SIG_DFL, SIG_IGN) are the kernel's, and never held. An exception another
thread raises into a thread (`interrupt`: an interrupted pdb command, in a thread other than
the main one or under a program's own SIGINT handler) is held the same way, in every thread.

It calls `_signal`, the C module, not `signal`, whose wrappers turn each handler into an enum
member if they can: 3-4 us a call against 0.02-0.3 us, twice on every command of pdb's thread.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (signal's C module: no stubs; the docstring says why)
import ctypes
import os
import signal
import threading
from types import FrameType
from typing import Any, Callable

from meshdbg.worker import signal_wakeup

_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})


class _Hold:
    """What is held now: the signals (the main thread's only: no lock), and which threads are
    inside a hold, with the exceptions `interrupt` deferred for them (under `lock`)."""

    handlers: dict[int, Any] = {}  # the program's handlers, by signal, while held
    caught: list[int] = []  # signals noted, in order
    frame: FrameType | None = None  # where the last one arrived
    wake: Callable[[], None] | None = None  # what ends the main thread's poll under way, if one is
    depths: dict[int, int] = {}  # thread id → how many holds it is inside (absent: none)
    deferred: dict[int, type[BaseException]] = {}  # thread id → what `interrupt` asked for while it was held
    # A thread's entering and leaving of its outermost hold, against `interrupt`: taken as a plain
    # lock's `with`, which no exception raised between two bytecodes can leave taken.
    lock = threading.Lock()


def _note(signum: int, frame: FrameType | None) -> None:
    """A held signal: noted, for its handler to run at the next safe point. The poll it must
    end is woken by the relay thread (meshdbg.worker.signal_wakeup), never from here while
    that thread watches: this runs between any two bytecodes of the main thread, maybe while
    it holds the gRPC call's lock, which waking takes, with the relay waiting for that lock
    and holding the call's count: the rank hung for good (a stress of interrupts, about once
    in 2,000). With no relay (no descriptor for its pipe), gRPC's own look for signals every
    200 ms runs this, from inside its poll, and this wakes the poll."""
    _Hold.caught.append(signum)
    _Hold.frame = frame
    if _Hold.wake is not None and not signal_wakeup.relaying():
        _Hold.wake()


class Held:
    """`with Held():` until the outermost hold of the thread ends, an exception another thread
    raises into it (`interrupt`) waits, and in the main thread the Python signal handlers are
    held; both happen where the hold ends (the exception of a handler, or the one deferred, is
    raised there)."""

    __slots__ = ("_thread", "_main")

    def __enter__(self) -> None:
        thread = self._thread = threading.get_ident()
        depth = _Hold.depths.get(thread, 0)
        if depth:  # (only the thread itself changes its count; `interrupt` only asks whether it has one)
            _Hold.depths[thread] = depth + 1
            return
        self._main = thread == threading.main_thread().ident
        counted = False
        try:
            with _Hold.lock:  # from here on `interrupt` defers its exception to the hold's end
                _Hold.depths[thread] = 1
                counted = True
            if self._main:
                for signum, handler in zip(_SIGNALS, map(_signal.getsignal, _SIGNALS)):  # (every wait of pdb's: one C loop)
                    if callable(handler):
                        _Hold.handlers[signum] = handler
                        _signal.signal(signum, _note)
        except BaseException:  # raised between two bytecodes before the hold began: nothing stays held
            try:
                if self._main:
                    _give_back(_Hold.handlers)
            finally:
                if counted:
                    _take_deferred(thread, leaving=True)
            raise

    def __exit__(self, *_: object) -> None:
        thread = self._thread
        depth = _Hold.depths[thread]
        if depth > 1:
            _Hold.depths[thread] = depth - 1
            return
        try:
            if self._main:
                handlers = dict(_Hold.handlers)
                _give_back(handlers)
                if _Hold.caught:  # (a signal noted meanwhile, or pending as its handler came back)
                    _run(handlers)
        finally:
            deferred = _take_deferred(thread, leaving=True)
        if deferred is not None:
            raise deferred


def _only_this_thread() -> None:
    """In a forked child only the forking thread lives on: the others' holds are over (a new
    thread may get one's id). A child forked by another thread while the main thread was held
    (paused at pdb's prompt) gets the program's signal handlers back: they stood in `_note`'s
    place for a hold that is not in the child, and the child's signals were noted for good."""
    thread = threading.get_ident()
    _Hold.lock = threading.Lock()  # (another thread may have held it at the fork)
    _Hold.depths = {thread: _Hold.depths[thread]} if thread in _Hold.depths else {}
    _Hold.deferred = {}
    if _Hold.handlers and thread not in _Hold.depths:
        _Hold.caught, _Hold.wake = [], None
        try:
            _give_back(dict(_Hold.handlers))
        except BaseException:  # (a handler that raised as it came back: the child's own business)
            pass


os.register_at_fork(after_in_child=_only_this_thread)


def _take_deferred(thread: int, leaving: bool) -> type[BaseException] | None:
    """The exception `interrupt` deferred for `thread`, if any, now that its poll woke or (with
    `leaving`) its outermost hold is over. Nothing inside the lock calls anything: a daemon
    thread stops for good at its next check once the interpreter exits, and one stopped there
    would hold the lock for every hold after."""
    with _Hold.lock:
        if leaving:
            del _Hold.depths[thread]
        deferred = _Hold.deferred[thread] if thread in _Hold.deferred else None
        if deferred is not None:
            del _Hold.deferred[thread]
    return deferred


def _raise_in_thread(thread_id: int, exception: type[BaseException]) -> None:
    """Make `thread_id` raise `exception` at its next function call or loop iteration.

    (Never withdrawn with NULL: CPython 3.11 then leaves its eval breaker set for good.)
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exception))


def interrupt(thread_id: int, exception: type[BaseException]) -> None:
    """Raise `exception` in thread `thread_id` (from another), at its next bytecode or, while
    it is held, where its hold ends or (the main thread) its poll is woken (`run_caught`):
    never inside meshdbg's transport, where it would leave a stream half-updated or a lock
    taken for good."""
    main = thread_id == threading.main_thread().ident
    with _Hold.lock:
        if thread_id not in _Hold.depths:
            _raise_in_thread(thread_id, exception)  # (while the lock keeps the thread from entering a hold)
            return
        _Hold.deferred[thread_id] = exception
        wake = _Hold.wake if main else None
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
    """In the main thread: a signal came while held, and its handler has not run yet, or an
    `interrupt` came."""
    return bool(_Hold.caught) or threading.get_ident() in _Hold.deferred


def run_caught() -> None:
    """In the main thread: run the handlers of the signals that came (held still), as a safe
    point: an exception of theirs, or the one `interrupt` deferred, is raised from here."""
    _run(_Hold.handlers)
    deferred = _take_deferred(threading.get_ident(), leaving=False)
    if deferred is not None:
        raise deferred


class Waking:
    """`with Waking(wake):` held (`Held`), with `wake` called when a signal comes (a poll to
    end, for its handler to run), at once (meshdbg.worker.signal_wakeup: gRPC's poll looks for
    signals only every 200 ms). A class, not generators: pdb's thread enters it at every wait
    (issue 22)."""

    __slots__ = ("_held", "_watching", "_wake", "_previous")

    def __init__(self, wake: Callable[[], None]) -> None:
        self._held, self._watching, self._wake = Held(), signal_wakeup.Watching(wake), wake
        self._previous: Callable[[], None] | None = None

    def __enter__(self) -> None:
        self._held.__enter__()
        try:
            self._watching.__enter__()
        except BaseException:
            self._held.__exit__()
            raise
        self._previous, _Hold.wake = _Hold.wake, self._wake

    def __exit__(self, *_: object) -> None:
        _Hold.wake = self._previous
        try:
            self._watching.__exit__()
        finally:
            self._held.__exit__()


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
