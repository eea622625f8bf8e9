"""A synchronous gRPC stream's messages, delivered by gRPC's own channel thread as they arrive.

A worker's session stream must be read at all times, even while pdb's thread runs a command
(an `interrupt` must reach `n` over a long loop), and pdb's thread must get each command as
soon as it arrives. A reader thread of our own (iterating the stream, queueing each message
for pdb's thread) costs a thread hand-off per message: the channel's thread wakes the reader,
the reader wakes pdb's thread. `deliver_each` has the channel's thread, which takes every
completion of the channel anyway, hand each message straight on: one wake-up, as a
synchronous stream read in place, and no thread of ours parked inside gRPC.

grpc's synchronous stack has no public per-message callback, so this starts each receive
itself as the stream's iterator does (`_MultiThreadedRendezvous._next`: a receive operation
on the call, with the event handler that fills the call's state), with a tag that then takes
the message and starts the next receive. It reads four attributes of the stream's object
and one function of `grpc._channel` (grpcio 1.85, pinned in pyproject.toml); the suite's
session tests fail at once if a gRPC release changes them.
"""

from __future__ import annotations

from typing import Any, Callable

from grpc import _channel
from grpc._cython import cygrpc

_RECEIVE = cygrpc.OperationType.receive_message
_NO_FLAGS = 0


def deliver_each(responses: Any, deliver: Callable[[Any], None]) -> None:
    """From now on, gRPC's channel thread calls `deliver(message)` with each message of
    `responses` (a stream call's iterator, not to be iterated any more) as it arrives, and
    `deliver(None)` once when the stream is over, ended or broken. `deliver` runs on that
    thread, which serves every stream of the channel: it must not block."""
    state, call = responses._state, responses._call
    fill_state = _channel._event_handler(state, responses._response_deserializer)

    def receive_next() -> bool:
        """Start the next receive (the state's condition held); whether one started."""
        if state.code is not None:
            return False
        state.due.add(_RECEIVE)
        if call.operate((cygrpc.ReceiveMessageOperation(_NO_FLAGS),), arrived):
            return True
        state.due.remove(_RECEIVE)
        return False

    def arrived(event: Any) -> bool:
        call_done: bool = fill_state(event)
        with state.condition:
            message, state.response = state.response, None
            more = message is not None and receive_next()
        if message is not None:
            deliver(message)
        if not more:
            deliver(None)
        return call_done

    with state.condition:
        started = receive_next()
    if not started:
        deliver(None)
