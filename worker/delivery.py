"""A synchronous gRPC stream driven by gRPC's own channel thread: no thread hand-off per message.

A worker's session stream must be read at all times, even while pdb's thread runs a command
(an `interrupt` must reach `n` over a long loop), and pdb's thread must get each command as
soon as it arrives. A reader thread of our own (iterating the stream, queueing each message
for pdb's thread) costs a thread hand-off per message: the channel's thread wakes the reader,
the reader wakes pdb's thread. Sending through the stream's request iterator costs another:
gRPC's request thread wakes to take each message from the queue. Here the channel's thread,
which takes every completion of the channel anyway, hands each message straight on
(`deliver_each`), and a message is sent from the thread that writes it (`Outbox`): one
wake-up per message each way, as a synchronous stream read and written in place.

grpc's synchronous stack has no public per-message callback nor a send without a request
iterator, so this starts each operation on the call itself as the stream's own code does
(`grpc._channel`: `_MultiThreadedRendezvous._next` for a receive, `_consume_request_iterator`
for a send), under the call's condition and with the event handler that keeps the call's
state. It reads four attributes of the stream's object and one function of `grpc._channel`
(as grpcio 1.85 has them). A gRPC without them (a later release that moved them, in the
user's environment: a worker runs in the user's process) gets the portable path instead, with
the same behaviour and one thread hand-off more each way: a reader thread of ours iterating
the stream, and gRPC's request thread taking each message off the request queue
(`direct_path` says which one a stream takes; tests/worker/test_delivery.py runs both).

The main thread's session stream goes one step further (meshdbg.worker.polled): its call has
a completion queue of its own, which the thread waiting for a message polls, so that even the
channel thread's hand-off is gone. `deliver` and the Outbox's completions then run on
whichever thread polls.
"""

from __future__ import annotations

import collections
import queue
import sys
import threading
import time
from typing import Any, Callable, Protocol

import grpc
from google.protobuf.message import Message
from grpc import _channel
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # (no stubs for gRPC's Cython core)

from meshdbg.worker.signal_hold import Held

_NO_FLAGS = 0
_FLUSH_POLL_S = 0.001
EXIT_LOCK_WAIT_S = 0.5  # at interpreter exit, how long a send waits for the call's lock before it gives up
_CORE_NAMES = ("OperationType", "ReceiveMessageOperation", "SendMessageOperation", "SendCloseFromClientOperation")
# Whether this gRPC has every internal the direct path (and meshdbg.worker.polled) reads.
CORE_AVAILABLE = hasattr(_channel, "_event_handler") and all(hasattr(cygrpc, name) for name in _CORE_NAMES)
if CORE_AVAILABLE:
    _RECEIVE = cygrpc.OperationType.receive_message
    _SEND = cygrpc.OperationType.send_message
    _CLOSE = cygrpc.OperationType.send_close_from_client


def direct_path(responses: Any) -> bool:
    """Whether this gRPC lets `responses` (a sync stream-stream call) be driven from its
    channel thread (every internal this module uses is there), or takes the portable path."""
    state, call = getattr(responses, "_state", None), getattr(responses, "_call", None)
    return (CORE_AVAILABLE and hasattr(responses, "_response_deserializer") and hasattr(call, "operate")
            and all(hasattr(state, name) for name in ("condition", "due", "response", "code")))


def deliver_each(responses: Any, deliver: Callable[[Any], None]) -> None:
    """From now on, `deliver(message)` is called with each message of `responses` (a stream
    call's iterator, not to be iterated any more) as it arrives, and `deliver(None)` once when
    the stream is over, ended or broken, and done (its status received: gRPC holds no more of
    it, so a fork may follow). `deliver` runs on gRPC's channel thread, which serves every
    stream of the channel (or, on the portable path, on a reader thread; on a polled stream,
    on the thread that polls): it must not block."""
    if not direct_path(responses):
        threading.Thread(target=_read_all, args=(responses, deliver), name="meshdbg-session-reader",
                         daemon=True).start()
        return
    state, call = responses._state, responses._call
    fill_state = _channel._event_handler(state, responses._response_deserializer)
    waiting = [2]  # the receives to stop and the call to be done: the end is delivered after both
    # A polled call (meshdbg.worker.polled) starts the next receive when it is next polled,
    # not as a message arrives: the message then goes to pdb's thread first, and the receive
    # is started while that thread next waits (issue 22: one batch fewer before each command).
    later: Callable[[Callable[[], None]], None] | None = getattr(call, "later", None)

    def one_of_two(*_: object) -> None:
        with state.condition:
            waiting[0] -= 1
            over = not waiting[0]
        if over:
            deliver(None)

    def receive_next() -> bool:
        """Start the next receive (the state's condition held); whether one started."""
        if state.code is not None:
            return False
        state.due.add(_RECEIVE)
        if call.operate((cygrpc.ReceiveMessageOperation(_NO_FLAGS),), arrived):
            return True
        state.due.remove(_RECEIVE)
        return False

    def receive_again() -> None:
        """Start the next receive; when none can start, the receives are over."""
        with state.condition:
            started = receive_next()
        if not started:
            one_of_two()

    def arrived(event: Any) -> bool:
        call_done: bool = fill_state(event)
        with state.condition:
            message, state.response = state.response, None
            more = message is not None and (later is not None or receive_next())
        if message is not None and later is not None:
            later(receive_again)
        if message is not None:
            deliver(message)
        if not more:
            one_of_two()
        return call_done

    receive_again()
    responses.add_done_callback(one_of_two)


def _read_all(responses: Any, deliver: Callable[[Any], None]) -> None:
    """The portable path's reader thread: each message, then the end (the iteration ends once
    the call is done)."""
    try:
        for message in responses:
            deliver(message)
    except grpc.RpcError:
        pass  # the stream broke
    deliver(None)


class Sender(Protocol):
    """Sends a session's messages in order, from any thread, never waiting (`outbox`)."""

    @property
    def backlog(self) -> int: ...

    def send(self, message: Message, last: bool = False) -> None: ...

    def flush(self, timeout: float) -> bool:
        """Wait (up to `timeout`) until every message sent was handed to the transport (or the
        stream is over); whether that happened in time."""
        ...

    def close(self) -> None:
        """Half-close the stream after the messages sent (once; nothing is sent after)."""
        ...


def outbox(responses: Any, requests: queue.SimpleQueue[Any]) -> Sender:
    """The sender of the stream `responses`, whose request iterator reads `requests` until
    None: an `Outbox` on the direct path, else the request queue itself, for gRPC's request
    thread to send from."""
    if direct_path(responses):
        return Outbox(responses, lambda: requests.put(None))
    return QueuedOutbox(requests)


class QueuedOutbox:
    """The portable path's sender: messages queued for gRPC's request thread; the last one
    ends the request iterator (half-close)."""

    def __init__(self, requests: queue.SimpleQueue[Any]) -> None:
        self._requests = requests
        self._closed = False

    @property
    def backlog(self) -> int:
        return self._requests.qsize()

    def send(self, message: Message, last: bool = False) -> None:
        if self._closed:
            return
        self._closed = last
        self._requests.put(message)
        if last:
            self._requests.put(None)

    def flush(self, timeout: float) -> bool:
        """(Taken off the queue by gRPC's request thread, which sends it at once, stands for sent.)"""
        deadline = time.monotonic() + timeout
        while self._requests.qsize():
            if time.monotonic() >= deadline:
                return False
            time.sleep(_FLUSH_POLL_S)
        return True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._requests.put(None)


class Outbox:
    """Sends on a stream from whichever thread calls `send`, in order, never waiting: a
    message is handed to gRPC at once when the stream sends nothing else, else queued and
    handed on by the channel's thread when the send before it completed. The last message
    half-closes the stream in the same operation.

    The stream's request iterator (gRPC's request thread) must have nothing more to send
    (the first message, a reply to it received) and be parked: `release` lets it go once the
    call is done, when it has nothing left to do.
    """

    def __init__(self, responses: Any, release: Callable[[], None]) -> None:
        self._state, self._call = responses._state, responses._call
        self._fill_state = _channel._event_handler(self._state, None)
        self._queued: collections.deque[tuple[bytes | None, bool]] = collections.deque()
        self._closed = False  # the last message was given
        responses.add_done_callback(lambda _: release())
        with self._state.condition:
            # The reply to the first message can be handled before that send's own completion
            # (a loaded machine): a message sent meanwhile would queue behind a send whose
            # completion is the request thread's, never `_sent`, and wait for good (one stop
            # in ~20 of a burst of 24 on a loaded machine never showed its prompt). gRPC
            # completes every operation of a call, the call's end included, so this ends.
            self._state.condition.wait_for(lambda: _SEND not in self._state.due or self._state.code is not None)

    @property
    def backlog(self) -> int:
        """Messages queued behind the one being sent."""
        return len(self._queued)

    def send(self, message: Message, last: bool = False) -> None:
        """Send `message` after those sent before, and with `last` half-close after it
        (dropped once the last was given or the stream is over). The main thread's signal
        handlers are held meanwhile (meshdbg.worker.signal_hold): an exception of theirs
        between a send started and its note in `due` (or a polled call's count of batches)
        would leave the stream half-updated, and the stop silent."""
        data = message.SerializeToString()
        with Held():
            # At interpreter exit (a daemon thread's session ended by its thread-local's finalizer) the
            # call's lock may be held by a daemon thread frozen for good: wait for it a moment only.
            if not self._state.condition.acquire(timeout=EXIT_LOCK_WAIT_S if sys.is_finalizing() else -1):
                return
            try:
                self._give(data, last)
            finally:
                self._state.condition.release()

    def flush(self, timeout: float) -> bool:
        with self._state.condition:
            return self._state.condition.wait_for(
                lambda: not (self._queued or _SEND in self._state.due) or self._state.code is not None, timeout)

    def close(self) -> None:
        with Held(), self._state.condition:
            self._give(None, True)

    def _give(self, data: bytes | None, last: bool) -> None:
        """`data` (None: no message) and with `last` the half-close, after what was given
        before: handed to gRPC now if nothing is being sent, else queued (the state's
        condition held; dropped once the last was given or the stream is over)."""
        if self._closed or self._state.code is not None:
            return
        self._closed = last
        if _SEND in self._state.due or self._queued:
            self._queued.append((data, last))
        else:
            self._start(data, last)

    def _start(self, data: bytes | None, last: bool) -> None:
        """Hand `data` (None: no message) to gRPC, with the half-close when `last` (the state's
        condition held)."""
        operations = (*((cygrpc.SendMessageOperation(data, _NO_FLAGS),) if data is not None else ()),
                      *((cygrpc.SendCloseFromClientOperation(_NO_FLAGS),) if last else ()))
        kinds = (*((_SEND,) if data is not None else ()), *((_CLOSE,) if last else ()))
        self._state.due.update(kinds)
        if not self._call.operate(operations, self._sent):
            self._state.due.difference_update(kinds)

    def _sent(self, event: Any) -> bool:
        call_done: bool = self._fill_state(event)
        with self._state.condition:
            if self._state.code is not None:
                self._queued.clear()  # the call is over: nothing more goes out
            elif self._queued and _SEND not in self._state.due:
                # (Another thread may have started a send between the completion taking this
                # one off the call and now: then its completion starts the next. gRPC allows
                # one send in flight, and refuses a second in this, its channel thread.)
                self._start(*self._queued.popleft())
        return call_done
