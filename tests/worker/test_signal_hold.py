"""meshdbg.worker.signal_hold with real signals: a handler held runs when the outermost hold
ends (its exception raised there), nested holds run nothing, the program's handlers are given
back, and a thread other than the main one holds nothing."""

from __future__ import annotations

import signal
import threading
from typing import Iterator

import pytest

from meshdbg.worker import signal_hold
from meshdbg.worker.signal_hold import Held


@pytest.fixture
def usr1() -> Iterator[list[int]]:
    """SIGUSR1's handler, noting each run, for the test's length."""
    ran: list[int] = []

    def handler(signum: int, frame: object) -> None:
        ran.append(signum)

    previous = signal.signal(signal.SIGUSR1, handler)
    yield ran
    assert signal.getsignal(signal.SIGUSR1) is handler  # given back
    signal.signal(signal.SIGUSR1, previous)


def test_a_held_handler_runs_when_the_outermost_hold_ends(usr1: list[int]) -> None:
    with Held():
        with Held():
            signal.raise_signal(signal.SIGUSR1)
            assert usr1 == [] and signal_hold.pending()
        assert usr1 == []  # the inner hold ended: still held
    assert usr1 == [signal.SIGUSR1] and not signal_hold.pending()


def test_sigint_held_raises_keyboardinterrupt_where_the_hold_ends(usr1: list[int]) -> None:
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        reached = False
        with pytest.raises(KeyboardInterrupt):
            with Held():
                signal.raise_signal(signal.SIGINT)
                signal.raise_signal(signal.SIGUSR1)
                reached = True  # the code held runs to its end
        assert reached
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert usr1 == [signal.SIGUSR1]  # raised again after SIGINT's exception, and run
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_hold_run_caught_runs_them_at_a_safe_point_held_still(usr1: list[int]) -> None:
    with Held():
        signal.raise_signal(signal.SIGUSR1)
        signal_hold.run_caught()
        assert usr1 == [signal.SIGUSR1]
        assert signal.getsignal(signal.SIGUSR1) is not None and not signal_hold.pending()
        signal.raise_signal(signal.SIGUSR1)
        assert usr1 == [signal.SIGUSR1]  # held again
    assert usr1 == [signal.SIGUSR1, signal.SIGUSR1]


def test_another_thread_holds_nothing(usr1: list[int]) -> None:
    def hold_elsewhere() -> None:
        with Held():
            assert signal.getsignal(signal.SIGUSR1).__name__ == "handler"  # (not replaced)

    thread = threading.Thread(target=hold_elsewhere)
    thread.start()
    thread.join()
    signal.raise_signal(signal.SIGUSR1)
    assert usr1 == [signal.SIGUSR1]


def test_the_programs_handler_is_known_held_or_not(usr1: list[int]) -> None:
    """What another thread asks before it sends the main thread SIGINT (an interrupt of a pdb
    command): the program's handler, not the hold's stand-in."""
    handler = signal.getsignal(signal.SIGUSR1)
    assert signal_hold.program_handler(signal.SIGUSR1) is handler
    with Held():
        assert signal.getsignal(signal.SIGUSR1) is not handler
        assert signal_hold.program_handler(signal.SIGUSR1) is handler
    assert signal_hold.program_handler(signal.SIGUSR1) is handler


def test_a_handler_raising_as_the_hold_begins_leaves_nothing_held(usr1: list[int],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Python runs a pending signal's handler as another handler is set: one that raises there
    (SIGINT's KeyboardInterrupt) in the middle of the hold's swap must leave every handler the
    program's, or SIGUSR1 would only be noted from then on, and never run."""
    real = signal_hold._signal

    class RaisingOnce:
        getsignal = staticmethod(real.getsignal)

        def signal(self, signum: int, handler: object) -> object:
            previous = real.signal(signum, handler)
            if handler is signal_hold._note and signum == signal.SIGUSR1:
                monkeypatch.setattr(signal_hold, "_signal", real)
                raise KeyboardInterrupt
            return previous

    monkeypatch.setattr(signal_hold, "_signal", RaisingOnce())
    with pytest.raises(KeyboardInterrupt):
        with Held():
            pytest.fail("the hold began")
    signal.raise_signal(signal.SIGUSR1)
    assert usr1 == [signal.SIGUSR1] and not signal_hold.pending()  # run at once, not noted
    with Held():  # and a later hold holds again
        signal.raise_signal(signal.SIGUSR1)
        assert usr1 == [signal.SIGUSR1]
    assert usr1 == [signal.SIGUSR1, signal.SIGUSR1]


def _interrupt_from_another_thread(exception: type[BaseException],
                                   target: int | None = None) -> threading.Event:
    """`signal_hold.interrupt` of `target` (this thread) from a thread of its own; set once sent."""
    sent, target = threading.Event(), target or threading.get_ident()

    def send() -> None:
        signal_hold.interrupt(target, exception)
        sent.set()

    threading.Thread(target=send).start()
    return sent


def _spin_until(sent: threading.Event) -> None:
    while not sent.is_set():  # bytecodes, each a place where an exception set on the thread lands
        pass


def test_another_threads_interrupt_waits_for_the_hold_to_end_in_the_main_thread() -> None:
    """An interrupted pdb command in a program with a SIGINT handler of its own: the exception
    never lands inside meshdbg's sending (held), but where the hold ends."""
    reached = False
    with pytest.raises(RuntimeError):
        with Held():
            _spin_until(_interrupt_from_another_thread(RuntimeError))
            assert signal_hold.pending()
            reached = True
    assert reached and not signal_hold.pending()


def test_another_threads_interrupt_waits_for_the_hold_to_end_in_any_thread() -> None:
    """A pdb command in a thread other than the main one, interrupted while it sends output."""
    outcome: list[str] = []
    started, interrupted = threading.Event(), threading.Event()

    def command() -> None:
        try:
            with Held():
                started.set()
                while not interrupted.is_set():
                    pass
                outcome.append("the hold ran to its end")
            outcome.append("not raised")
        except RuntimeError:
            outcome.append("raised where the hold ended")

    thread = threading.Thread(target=command)
    thread.start()
    assert started.wait(10)
    signal_hold.interrupt(thread.ident or 0, RuntimeError)
    interrupted.set()
    thread.join(10)
    assert outcome == ["the hold ran to its end", "raised where the hold ended"]


def test_another_threads_interrupt_lands_at_once_when_not_held() -> None:
    with pytest.raises(RuntimeError):
        _spin_until(_interrupt_from_another_thread(RuntimeError))
        for _ in range(1000):
            pass
        pytest.fail("the exception did not land")
    with Held():  # nothing left over for the next hold
        assert not signal_hold.pending()


def test_a_held_poll_is_woken_and_raises_another_threads_interrupt() -> None:
    woken = threading.Event()
    with pytest.raises(RuntimeError):
        with signal_hold.Waking(woken.set):
            _interrupt_from_another_thread(RuntimeError)
            assert woken.wait(10) and signal_hold.pending()
            signal_hold.run_caught()
            pytest.fail("run_caught did not raise it")


def test_another_threads_hold_failing_to_begin_leaves_the_main_threads_held_handlers(
        usr1: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception landing as another thread's hold begins (at its lock's exit) puts back
    only what that hold took: the main thread's held handlers are still given back at its end."""
    class RaisingOnceOnLeave:
        def __init__(self) -> None:
            self.lock, self.raised = threading.Lock(), False

        def __enter__(self) -> None:
            self.lock.acquire()

        def __exit__(self, *_: object) -> None:
            self.lock.release()
            if not self.raised and threading.current_thread() is not threading.main_thread():
                self.raised = True
                raise KeyboardInterrupt  # (as one set on the thread lands right after the lock's exit)

    monkeypatch.setattr(signal_hold._Hold, "lock", RaisingOnceOnLeave())
    outcome: list[str] = []

    def hold() -> None:
        try:
            with Held():
                outcome.append("held")
        except KeyboardInterrupt:
            outcome.append("raised as it began")

    with Held():
        thread = threading.Thread(target=hold)
        thread.start()
        thread.join(10)
        signal.raise_signal(signal.SIGUSR1)
        assert usr1 == []
    assert outcome == ["raised as it began"] and usr1 == [signal.SIGUSR1]
