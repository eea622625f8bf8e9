"""Session streams kept open between a process's stops, for its next stop to open on.

Setting a gRPC stream up and tearing it down cost a worker more than a stop's own commands:
the call's threads start and end, both sides settle the call, and the server's handler starts
and ends with it. When 32 ranks continue together on 2 cores, that teardown was most of what
a `continue` costs above its floor (issue 22). So a session that ends asks the server to park
its stream (`Ended.park`): the server closes the session, answers `parked`, and waits on the
stream for the next hello, which the process's next stop sends on it.

A process keeps at most PARKED_LIMIT streams to each server (one per thread stopped at the
same time, as a rule: a burst of threads stopping together parks that many, and the others
close as before). A parked stream that ends (its server stopped, restarted or went silent)
or on which the server says goodbye (it shuts down) is let go, so a stop never opens on a
stream known to be dead; one that dies just as a stop takes it is said by `claim`, and the
stop opens a fresh stream instead. A forked child sets its parent's aside (`forget_in_child`).

A session's end on a stream to be parked is waited for only until gRPC has handed it to the
transport, not until the server answers: the server reads a stream in order, so it has the end
before anything else of the stream, a next hello or the stream's end, and waiting for its
answer cost every worker two more wake-ups, the server a write, in the `continue` of 32 ranks.
At the process's exit (`_close_at_exit`) the parked streams are half-closed and the server's
end of each waited for, briefly, so that it closes them cleanly rather than see them break.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
from typing import Any, Callable

from meshdbg.worker.delivery import Sender, deliver_each, outbox
from meshdbg.worker.polled import PolledCall, poller_of
from meshdbg.wire.proto import debugger_pb2 as pb

PARKED_LIMIT = 4  # streams a process keeps parked for each server
EXIT_WAIT_S = 1.0  # at the process's exit, how long it waits for the server to end its parked streams

Deliver = Callable[[pb.ServerMessage | None], None]


class SessionStream:
    """A worker's session stream, which outlives its session when parked: its request queue
    (`outgoing`), its call (`responses`) and the call's poller if its thread polls it
    (meshdbg.worker.polled), its sender, and where its messages go now."""

    def __init__(self, outgoing: queue.SimpleQueue, responses: Any, deliver: Deliver) -> None:
        self.outgoing, self.responses = outgoing, responses
        self.poller: PolledCall | None = poller_of(responses)
        self.outbox: Sender = outbox(responses, outgoing)
        self._lock = threading.Lock()
        self._deliver = deliver
        self.over = threading.Event()  # its end was delivered
        deliver_each(responses, self._arrived)

    def _arrived(self, message: pb.ServerMessage | None) -> None:
        with self._lock:
            if message is None:
                self.over.set()
            deliver = self._deliver
        deliver(message)

    def claim(self, deliver: Deliver) -> bool:
        """From now on, deliver the stream's messages to `deliver`; False (and nothing
        changed) when the stream is already over."""
        with self._lock:
            if self.over.is_set():
                return False
            self._deliver = deliver
            return True

    def close(self) -> None:
        """End the stream from this side (a stream not kept: no room, no answer, a goodbye)."""
        with self._lock:
            self._deliver = _ignore
        self.outgoing.put(None)  # lets go of gRPC's thread that reads the request queue
        self.responses.cancel()


def _ignore(message: pb.ServerMessage | None) -> None:
    """What a closed stream's messages are given to."""


_parked: dict[str, list[SessionStream]] = {}  # by server address
_lock = threading.Lock()
_inherited: list[dict[str, list[SessionStream]]] = []  # in a forked child: the parent's, kept and never used


def room(addr: str) -> bool:
    """Whether a stream to `addr` ending now may be parked."""
    with _lock:
        return len(_parked.get(addr, ())) < PARKED_LIMIT


def park(addr: str, stream: SessionStream) -> None:
    """Keep `stream` (its session closed by the server, which said `parked`) for a next stop
    on `addr`; closed instead when the process keeps enough already."""
    with _lock:
        streams = _parked.setdefault(addr, [])
        kept = len(streams) < PARKED_LIMIT and stream.claim(lambda message: _while_parked(addr, stream, message))
        if kept:
            streams.append(stream)
    if not kept:
        stream.close()


def _while_parked(addr: str, stream: SessionStream, message: pb.ServerMessage | None) -> None:
    """A message on a parked stream: its end, or the server's goodbye, lets it go (on gRPC's
    channel thread: never blocks)."""
    if message is not None and not message.HasField("goodbye"):
        return
    with _lock:
        streams = _parked.get(addr, [])
        if stream in streams:
            streams.remove(stream)
    if message is not None:
        stream.close()


def take(addr: str) -> SessionStream | None:
    """A parked stream to `addr` for a new stop, if the process has one (the last parked:
    the likeliest to be alive)."""
    with _lock:
        streams = _parked.get(addr)
        return streams.pop() if streams else None


def forget_in_child() -> None:
    """In a forked child: the parent's parked streams are driven by the parent's gRPC threads,
    which a fork does not copy; set aside (never closed, which would reach the parent's
    connection), so the child's stops open streams of their own."""
    global _lock, _parked
    _lock = threading.Lock()  # another thread of the parent may have held it at the fork
    _inherited.append(_parked)
    _parked = {}


def _close_at_exit() -> None:
    """At the process's exit: half-close every parked stream, and wait (EXIT_WAIT_S at most in
    all) until the server ended each, having read all it was sent."""
    with _lock:
        streams = [stream for kept in _parked.values() for stream in kept]
        _parked.clear()
    for stream in streams:
        stream.outbox.close()
    deadline = time.monotonic() + EXIT_WAIT_S
    for stream in streams:
        stream.over.wait(max(0.0, deadline - time.monotonic()))


atexit.register(_close_at_exit)
