"""meshdbg.worker.polled over a real gRPC stream, with real signals: the thread that waits for a
message takes it itself, a helper takes what arrives while none waits, a signal's handler runs
while the main thread waits (and SIGINT's KeyboardInterrupt leaves the stream whole), an
exception that ends a poll gives the call up instead of polling a queue gRPC destroyed, a wait
with a timeout ends then, and nothing polls a call that is over."""

from __future__ import annotations

import ctypes
import queue
import signal
import threading
import time
from typing import Any

import grpc
import pytest

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker import polled
from meshdbg.worker.delivery import Sender, deliver_each, outbox

from e2e import wait_for
from test_delivery import METHOD, _line, channel  # (`channel`: the echo server, a fixture)

SIGNAL_S = 1.0  # a held signal's handler runs within gRPC's poll tick (200 ms), with room


class Stream:
    """An echo stream on the polled path: what arrived (with the thread that delivered it)."""

    def __init__(self, channel: grpc.Channel) -> None:
        multicallable = channel.stream_stream(METHOD, request_serializer=pb.ServerMessage.SerializeToString,
                                              response_deserializer=pb.ServerMessage.FromString)
        self.responses: Any = polled.open_polled(multicallable, _line("hello"), None)
        assert next(self.responses).input.line == "hello"
        poller = polled.poller_of(self.responses)
        assert poller is not None
        self.poller = poller
        self.arrived: queue.SimpleQueue[tuple[str | None, str]] = queue.SimpleQueue()
        self.over = threading.Event()
        deliver_each(self.responses, self._deliver)
        self.sender: Sender = outbox(self.responses, queue.SimpleQueue())

    def _deliver(self, message: pb.ServerMessage | None) -> None:
        self.arrived.put((message.input.line if message is not None else None, threading.current_thread().name))
        if message is None:
            self.over.set()

    def wait(self) -> tuple[str | None, str]:
        """Wait, polling, for the next message; (its line, the thread that delivered it)."""
        self.poller.wait_for(lambda: not self.arrived.empty())
        return self.arrived.get_nowait()


def later(seconds: float, action: Any) -> None:
    """Run `action` on another thread after `seconds` (what a user or a program does meanwhile)."""
    timer = threading.Timer(seconds, action)
    timer.daemon = True
    timer.start()


ROUNDS = 20
# Rounds whose message the helper may take: between two waits the thread may be descheduled past
# HELP_AFTER_S on a loaded machine, and the helper then polls, by design (a suite under load took
# the first round's so once).
HELPED_AT_MOST = 3


def test_the_waiting_thread_takes_its_message_and_the_helper_what_comes_while_none_waits(channel: grpc.Channel) -> None:
    stream = Stream(channel)
    takers = []
    for index in range(ROUNDS):
        stream.sender.send(_line(f"line {index}"))
        line, taker = stream.wait()
        assert line == f"line {index}"
        takers.append(taker)
    assert takers.count(threading.current_thread().name) >= ROUNDS - HELPED_AT_MOST, takers
    stream.sender.send(_line("while none waits"))
    assert stream.arrived.get(timeout=10) == ("while none waits", "meshdbg-poller")
    stream.sender.close()
    assert stream.over.wait(10)


def test_a_programs_signal_handler_runs_while_the_main_thread_waits_and_the_wait_goes_on(channel: grpc.Channel) -> None:
    stream = Stream(channel)
    handled = threading.Event()

    def handler(signum: int, frame: object) -> None:
        assert threading.current_thread() is threading.main_thread()
        handled.set()

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        later(0.3, lambda: signal.raise_signal(signal.SIGUSR1))
        later(0.3, lambda: handled.wait(SIGNAL_S + 10) and stream.sender.send(_line("after the signal")))
        started = time.monotonic()
        assert stream.wait() == ("after the signal", threading.current_thread().name)
        assert handled.is_set() and time.monotonic() - started < SIGNAL_S + 10
        assert signal.getsignal(signal.SIGUSR1) is handler  # given back
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not stream.poller.lost


def test_sigint_while_the_main_thread_waits_raises_keyboardinterrupt_and_the_stream_goes_on(channel: grpc.Channel) -> None:
    stream = Stream(channel)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for _ in range(3):
            later(0.3, lambda: signal.raise_signal(signal.SIGINT))
            with pytest.raises(KeyboardInterrupt):
                stream.wait()
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            stream.sender.send(_line("after Ctrl-C"))
            assert stream.wait() == ("after Ctrl-C", threading.current_thread().name)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not stream.poller.lost and not stream.over.is_set()


def test_an_exception_raised_into_the_polling_thread_gives_the_call_up(channel: grpc.Channel) -> None:
    """Another thread's PyThreadState_SetAsyncExc lands as the poll returns: the event it took
    may be half handled, so the call is cancelled and never polled again (gRPC may have
    destroyed its queue); the session then opens another stream (meshdbg.worker.remote)."""
    stream = Stream(channel)
    main = threading.get_ident()

    def raise_then_send() -> None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main), ctypes.py_object(KeyboardInterrupt))
        stream.sender.send(_line("the poll returns"))

    later(0.3, raise_then_send)
    with pytest.raises(KeyboardInterrupt):
        stream.wait()
        time.sleep(10)  # (where it lands, if the wait returned first: a Python line of this thread)
    assert stream.poller.lost and stream.poller.over
    stream.poller.wait_for(lambda: False)  # returns at once: nothing polls a call given up


def test_nothing_polls_a_call_that_is_over(channel: grpc.Channel) -> None:
    stream = Stream(channel)
    stream.sender.close()
    assert stream.over.wait(10)
    wait_for(lambda: stream.poller.over, what="the call counted over")
    stream.poller.wait_for(lambda: False)  # returns at once
    wait_for(lambda: not stream.poller.helper.is_alive(), what="the helper gone")


def test_a_wait_with_a_timeout_gives_up_when_nothing_comes_and_the_stream_goes_on(channel: grpc.Channel) -> None:
    """A session's end waits so for its send (bounded: a stalled server may never read it)."""
    stream = Stream(channel)
    timeout_s = 0.5
    started = time.monotonic()
    stream.poller.wait_for(lambda: not stream.arrived.empty(), timeout_s)
    waited = time.monotonic() - started
    assert timeout_s <= waited < timeout_s + polled.HELP_TICK_S + 5 and stream.arrived.empty()
    stream.sender.send(_line("after the timeout"))
    assert stream.wait() == ("after the timeout", threading.current_thread().name)
    assert not stream.poller.lost
