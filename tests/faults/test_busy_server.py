"""A worker refused by a server too busy for another stream asks again instead of skipping.

The server here takes one RPC at a time (grpc's maximum_concurrent_rpcs), so a second
session is refused with RESOURCE_EXHAUSTED until the first ends: it must open then, even
when that takes longer than the reconnect window (a server that accepts connections is
alive, only loaded). Streams dropped after their hello are asked again too, and the tries
leave no gRPC thread behind (in a burst of 10,000 they were thousands).
"""

from __future__ import annotations

import threading
import time
from typing import Iterator

import grpc
import pytest

from e2e import servicer_on_loopback

from meshdbg.debugger.servicer import DebuggerServicer
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.wire.connection import ConnectionInfo, PROTOCOL_VERSION
from meshdbg.wire.environment import RECONNECT_S
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason
from meshdbg.worker.remote import RemoteSession


@pytest.fixture
def one_rpc_at_a_time() -> Iterator[ConnectionInfo]:
    """A real meshdbg server on loopback that runs one RPC at a time."""
    with servicer_on_loopback(DebuggerServicer(SessionRegistry()), maximum_concurrent_rpcs=1) as connection:
        yield connection


def request_readers() -> int:
    """gRPC's threads that read a call's outgoing messages, still alive (gRPC starts each
    through a fork-managed wrapper, `_run`, which gives it its name)."""
    return sum(thread.name.endswith("(_run)") for thread in threading.enumerate())


@pytest.mark.parametrize("held_s", [0.5, 3.0], ids=["within-the-window", "past-the-window"])
def test_a_refused_session_retries_until_the_server_has_room(one_rpc_at_a_time: ConnectionInfo, held_s: float,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECONNECT_S.name, "1")
    connection = one_rpc_at_a_time
    # Both stops are a thread's other than the main one, whose stream is polled by that
    # thread (meshdbg.worker.polled) and has neither a request reader nor the channel's thread.
    opened: list[RemoteSession] = []
    opening = threading.Thread(target=lambda: opened.append(
        RemoteSession(lambda: connection, pb.Identity(rank=0, protocol_version=PROTOCOL_VERSION))))
    opening.start()
    opening.join(20)
    first = opened[0]
    readers = request_readers()
    second: list[RemoteSession | Exception] = []

    def open_second() -> None:
        try:
            second.append(RemoteSession(lambda: connection, pb.Identity(rank=1, protocol_version=PROTOCOL_VERSION)))
        except Exception as exc:  # the test reports it below
            second.append(exc)

    opener = threading.Thread(target=open_second)
    opener.start()
    opener.join(held_s)
    assert opener.is_alive() and not second, f"the second session did not wait for room: {second}"
    first.end("", EndReason.CONTINUED)
    opener.join(20)
    assert second and isinstance(second[0], RemoteSession), second
    deadline = time.monotonic() + 10
    while request_readers() > readers and time.monotonic() < deadline:  # the refused tries' readers
        time.sleep(0.05)
    assert request_readers() <= readers, "a refused try left gRPC's request reader behind"
    second[0].end("", EndReason.CONTINUED)


class RefusesAfterHello(DebuggerServicer):
    """Reads a session's hello, then drops the stream as a starved server does (CANCELLED),
    until `busy_until`; then serves as usual."""

    busy_until = 0.0

    async def Session(self, request_iterator, context):  # type: ignore[override]
        if time.monotonic() < self.busy_until:
            await request_iterator.__anext__()
            await context.abort(grpc.StatusCode.CANCELLED, "dropped under load")
        return await super().Session(request_iterator, context)


def test_streams_dropped_after_their_hello_are_retried_without_leaking_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECONNECT_S.name, "1")
    servicer = RefusesAfterHello(SessionRegistry())
    servicer.busy_until = time.monotonic() + 3
    with servicer_on_loopback(servicer) as connection:
        readers = request_readers()
        session = RemoteSession(lambda: connection, pb.Identity(rank=0, protocol_version=PROTOCOL_VERSION))
        assert time.monotonic() >= servicer.busy_until
        deadline = time.monotonic() + 5
        while request_readers() > readers + 2 and time.monotonic() < deadline:  # + the session's and the channel's
            time.sleep(0.05)
        assert request_readers() <= readers + 2, "a dropped try left gRPC's request reader behind"
        session.end("", EndReason.CONTINUED)
        session.wait_closed()
