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
