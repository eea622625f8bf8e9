"""meshdbg.worker.signal_wakeup: a signal that comes while the main thread polls wakes the poll
at once and still reaches the program's own wakeup fd (tests/faults/test_paused_ranks.py has
the paused rank's handlers running at once, an asyncio loop's signal, and a child forked meanwhile)."""

from __future__ import annotations

import os
import signal
import threading

from meshdbg.worker import signal_wakeup


def test_a_signal_wakes_the_watcher_at_once_and_reaches_the_programs_wakeup_fd() -> None:
    read, write = os.pipe()
    os.set_blocking(write, False)
    handler = signal.signal(signal.SIGUSR2, lambda signum, frame: None)
    before = signal.set_wakeup_fd(write)  # the program's own, as an asyncio loop's
    woken = threading.Event()
    try:
        with signal_wakeup.Watching(woken.set):
            signal.pthread_kill(threading.get_ident(), signal.SIGUSR2)
            assert woken.wait(5), "the watcher was not woken"
        os.set_blocking(read, True)
        assert os.read(read, 1) == bytes([signal.SIGUSR2])  # handed on
        assert signal.set_wakeup_fd(before) == write  # and the program's fd given back
    finally:
        signal.set_wakeup_fd(before)
        signal.signal(signal.SIGUSR2, handler)
        os.close(read)
        os.close(write)
