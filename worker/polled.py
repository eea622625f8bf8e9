"""A session stream with a completion queue of its own, polled by the thread that waits on it.

A synchronous stream's completions are taken by gRPC's channel thread, which then wakes the
thread that waits for the message (meshdbg.worker.delivery): per round trip a wake-up and a
GIL hand-off more than the work needs, 60-100 us on this project's 2-core machine (README,
"pdb's thread polls its own stream"). On a segregated call (gRPC's own way for its
single-threaded unary-stream calls) the call's completion queue is its own: the thread waiting
for a message (pdb's) polls it and takes the message itself, and while no thread waits a
helper thread polls, so that an `interrupt` is answered while pdb runs a command. An empty
batch (`_WAKE`) makes the helper's poll return when a thread starts to wait.

Three rules keep it safe in a user's process:
- Only the main thread's stops open such a stream (meshdbg.worker.remote): each poller wakes
  every 200 ms holding the GIL (gRPC's Cython checks signals so, a C constant), and a burst of
  2,000 stopped threads each with a poller of its own would starve the process. A process has
  at most PARKED_LIMIT + 1 of them per server.
- An exception raised in the main thread while it polls (by a signal's handler) ends gRPC's
  poll by destroying the call's queue, with no status ever delivered. So signals' Python
  handlers are held while the main thread waits (meshdbg.worker.signal_hold) and run once
  the poll is over, where SIGINT's KeyboardInterrupt leaves the stream whole, as it leaves a
  queue's `get`: pdb shows `--KeyboardInterrupt--` and the stop goes on. meshdbg's own
  interrupt of a command is held the same way (`signal_hold.interrupt`). Any other exception
  there (a program's own `PyThreadState_SetAsyncExc`) loses the stream: it is never polled
  again (`lost`), and the session takes it for broken and re-registers the stop on a new one.
- gRPC destroys the call's queue when its last batch completes: PolledCall counts the batches
  in flight (`operate` is the only way one starts) and polls no more once none is.

It reads the same internals of gRPC as meshdbg.worker.delivery, and `segregated_call` on the
channel with the attributes of its stream-stream callable that grpc's own `__call__` reads
(grpcio 1.85); without them, or with gRPC's fork support on (`available`), a stream is
opened as before.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from google.protobuf.message import Message
from grpc import _channel, _compression
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # (no stubs for gRPC's Cython core)

from meshdbg.worker import delivery, signal_hold
from meshdbg.worker.forking import fork_handlers_on

_NO_FLAGS = 0
HELP_AFTER_S = 0.01  # how long no thread waits before the helper polls
HELP_TICK_S = 0.1  # how often the helper looks while a thread waits...
DOZE_AFTER_S = 1.0  # ...for less than this long; past it, the helper looks this seldom, or when the thread leaves
_WAKE = object()  # the tag of an empty batch: it completes at once and ends a poll
_NEVER = float("inf")  # the deadline of a wait with no timeout
_CALLABLE_NAMES = ("_channel", "_method", "_target", "_context", "_registered_call_handle", "_response_deserializer")
_CHANNEL_NAMES = ("_RPCState", "_STREAM_STREAM_INITIAL_DUE", "_InitialMetadataFlags", "_MultiThreadedRendezvous")


def available(multicallable: Any) -> bool:
    """Whether this gRPC lets `multicallable` (a sync stream-stream callable) open a polled
    stream. Not with gRPC's Python fork support on (GRPC_ENABLE_FORK_SUPPORT=1): a forked
    child closes its parent's channels, waiting for their calls to drain through the channel's
    queue, which a segregated call's completions never reach: the child would hang in fork."""
    return (delivery.CORE_AVAILABLE and not fork_handlers_on()
            and all(hasattr(_channel, name) for name in _CHANNEL_NAMES)
            and all(hasattr(multicallable, name) for name in _CALLABLE_NAMES)
            and hasattr(getattr(multicallable, "_channel", None), "segregated_call"))


def open_polled(multicallable: Any, first: Message, metadata: Any) -> Any:
    """`multicallable` called on a request iterator yielding `first` (and then nothing, as its
    later messages are sent through meshdbg.worker.delivery's Outbox): the stream's iterator
    of replies (a grpc.Future too), whose call is a PolledCall."""
    state = _channel._RPCState(_channel._STREAM_STREAM_INITIAL_DUE, None, None, None, None)
    state.method = multicallable._method.decode()
    state.target = multicallable._target.decode()
    state.due.add(cygrpc.OperationType.send_message)  # (the Outbox waits until the first is sent)
    augmented = _compression.augment_metadata(metadata, None)
    handler = _channel._event_handler(state, multicallable._response_deserializer)
    batches = (((cygrpc.SendInitialMetadataOperation(augmented, _channel._InitialMetadataFlags()),
                 cygrpc.ReceiveStatusOnClientOperation(_NO_FLAGS)), handler),
               ((cygrpc.ReceiveInitialMetadataOperation(_NO_FLAGS),), handler),
               ((cygrpc.SendMessageOperation(first.SerializeToString(), _NO_FLAGS),), handler))
    call = multicallable._channel.segregated_call(
        cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS, multicallable._method, None, None, augmented, None,
        batches, multicallable._context, multicallable._registered_call_handle)
    return _channel._MultiThreadedRendezvous(state, PolledCall(call, len(batches)), multicallable._response_deserializer,
                                             None)


def poller_of(responses: Any) -> PolledCall | None:
    """The PolledCall of a stream opened by `open_polled`, else None."""
    call = getattr(responses, "_call", None)
    return call if isinstance(call, PolledCall) else None


class PolledCall:
    """A segregated call and its completion queue, polled by the thread that waits for a
    message of it (`wait_for`) or, once none has waited for HELP_AFTER_S, by a helper thread.

    The helper does not take over the moment the waiting thread leaves: pdb's thread is back
    within a few hundred microseconds after most commands (`p x`, `n`), and a helper woken
    for each would cost the wake-ups this saves. It looks every HELP_TICK_S, so an `interrupt`
    reaches a long command (`n` over a loop) within HELP_AFTER_S + HELP_TICK_S. A thread that
    has waited DOZE_AFTER_S (a rank paused, nobody typing) wakes the helper as it leaves
    instead, and the helper looks only once a DOZE_AFTER_S meanwhile, so that a thousand
    paused ranks do not each wake ten times a second.

    Stands for the call in gRPC's stream object (`operate`, `cancel`), so that every batch is
    counted: the queue is polled only while one is in flight."""

    def __init__(self, call: Any, batches: int) -> None:
        self._call = call
        self._in_flight = batches
        self._counting = threading.RLock()  # (reentrant: a held signal's note starts a batch)
        lock = self._lock = threading.Lock()
        self._helper_wakes = threading.Condition(lock)  # the helper waits on it
        self._waiter_wakes = threading.Condition(lock)  # the waiting thread waits on it while the helper polls
        self._waiting = False  # a thread waits in `wait_for`, and polls while the helper does not
        self._waiting_since = 0.0  # (time.monotonic) when it started to
        self._left_at = -HELP_AFTER_S  # (time.monotonic) when the waiting thread last left
        self._dozing = False  # the helper looks once a DOZE_AFTER_S, or when the waiting thread leaves
        self._deadline = _NEVER  # (time.monotonic) when the waiting thread gives up (`wait_for`'s timeout)
        self._helper_polling = False
        self._woken = False  # a _WAKE is on its way to the helper's poll
        self.over = False  # no batch is in flight: the queue is gone, and nothing polls it
        self.lost = False  # an exception ended a poll: the call was given up
        self._deferred: Callable[[], None] | None = None  # what starts the next receive (`later`)
        self.helper = threading.Thread(target=self._help, name="meshdbg-poller", daemon=True)
        self.helper.start()

    def operate(self, operations: tuple[Any, ...], tag: Any) -> bool:
        """Start a batch on the call (as a SegregatedCall's `operate`); whether it started.

        An exception raised into this thread meanwhile (SIGINT's KeyboardInterrupt while pdb
        sends, an interrupt of meshdbg's own while a command streams its output) may land
        after gRPC started the batch and before it was counted: the count would reach zero
        with the batch still in flight, and the stream stop being polled. The call is given
        up then (`lost`), and the session opens another."""
        with self._counting:
            try:
                started: bool = self._call.operate(operations, tag)
                if started:
                    self._in_flight += 1
            except BaseException:
                self._give_up()
                raise
            return started

    def later(self, start: Callable[[], None]) -> None:
        """Run `start` (which starts the next receive) before the call is next polled, by
        whichever thread polls it (meshdbg.worker.delivery): called as a message arrives,
        from the poll that took it."""
        self._deferred = start

    def cancel(self, code: Any, details: str) -> None:
        self._call.cancel(code, details)

    def wait_for(self, ready: Callable[[], bool], timeout_s: float | None = None) -> None:
        """Poll the call until `ready()` (a message it delivers arrived, a send completed),
        it is over, or `timeout_s` passed (the helper, looking every HELP_TICK_S, ends the
        poll then). In the main thread, signals' Python handlers are held meanwhile
        (meshdbg.worker.signal_hold): one that comes ends the poll and runs then (a
        KeyboardInterrupt of SIGINT is raised from here, the stream whole) and, when it
        returns, the wait goes on."""
        deadline = _NEVER if timeout_s is None else time.monotonic() + timeout_s
        if threading.current_thread() is not threading.main_thread():
            self._wait(ready, lambda: False, deadline)
            return
        with signal_hold.Waking(self._wake):
            while True:
                self._wait(ready, signal_hold.pending, deadline)
                if not signal_hold.pending():
                    return
                signal_hold.run_caught()

    def _wait(self, ready: Callable[[], bool], signalled: Callable[[], bool], deadline: float) -> None:
        timed = deadline != _NEVER
        with self._lock:  # (the waiter's condition's: entered as the plain lock, no Python-level enter)
            self._waiting, self._waiting_since, self._deadline = True, time.monotonic(), deadline
            try:
                while not (ready() or self.over or signalled() or (timed and time.monotonic() >= deadline)):
                    if not self._helper_polling:
                        self._poll()
                    else:
                        if not self._woken:
                            self._woken = True
                            self._wake()
                        self._waiter_wakes.wait()
            finally:
                self._waiting = False
                self._left_at = time.monotonic()
                if self._dozing:
                    self._dozing = False
                    self._helper_wakes.notify()

    def _give_up(self) -> None:
        """An exception broke the count of batches, or gRPC's queue: cancel the call and
        never poll it again."""
        self.lost = self.over = True
        self._call.cancel(cygrpc.StatusCode.cancelled, "meshdbg: the stream was interrupted")

    def hand_over(self) -> None:
        """The waiting thread is done with the call for a while (its session ended, the
        program runs on) and waits for what is still in flight (the server's close of the
        stream) without polling: the helper polls from now on, at once, so that it completes
        without waiting for the helper's next look."""
        with self._lock:  # (not the Condition's Python-level enter, where a Ctrl-C could leave it taken)
            self._left_at = -HELP_AFTER_S
            self._helper_wakes.notify()

    def _wake(self) -> None:
        """End the poll under way (an empty batch completes at once)."""
        self.operate((), _WAKE)

    def _help(self) -> None:
        with self._helper_wakes:
            while not self.over:
                now = time.monotonic()
                if self._waiting:
                    if now >= self._deadline and not self._woken:  # the waiting thread's poll ends: it gives up
                        self._woken = True
                        self._wake()
                    self._dozing = now - self._waiting_since >= DOZE_AFTER_S
                    # (Dozing, it still looks once a DOZE_AFTER_S: a call given up while it dozes ends it.)
                    self._helper_wakes.wait(DOZE_AFTER_S if self._dozing else HELP_TICK_S)
                    continue
                if now - self._left_at < HELP_AFTER_S:
                    self._helper_wakes.wait(HELP_AFTER_S - (now - self._left_at))
                    continue
                self._helper_polling = True
                try:
                    self._poll(self._waiter_wakes)
                finally:
                    self._helper_polling = False

    def _poll(self, then_wake: threading.Condition | None = None) -> None:
        """Take one completion of the call and hand it to its batch's handler (the lock held
        by the caller, released while polling); then wake one thread of `then_wake`."""
        start, self._deferred = self._deferred, None
        self._helper_wakes.release()  # (the lock both conditions share)
        try:
            if start is not None:
                start()
            event = self._call.next_event()
            with self._counting:
                self._in_flight -= 1
                over = not self._in_flight
            if event.tag is not _WAKE:
                event.tag(event)
            if over and self._deferred is not None:  # the call ended meanwhile: the receive says so
                start, self._deferred = self._deferred, None
                start()
        except BaseException:
            self._give_up()  # (the queue may be gone: never polled again)
            raise
        finally:
            self._helper_wakes.acquire()
            if then_wake is not None:
                then_wake.notify()
        if event.tag is _WAKE:
            self._woken = False
        self.over = self.over or over
