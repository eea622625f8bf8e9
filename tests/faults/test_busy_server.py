"""A worker refused by a server too busy for another stream asks again instead of skipping.

The server here takes one RPC at a time (grpc's maximum_concurrent_rpcs), so a second
session is refused with RESOURCE_EXHAUSTED until the first ends: it must open then.
"""

from __future__ import annotations

import asyncio
import threading

import grpc

from meshdbg.debugger.auth import TokenInterceptor
from meshdbg.debugger.servicer import DebuggerServicer
from meshdbg.debugger.sessions import SessionRegistry
from meshdbg.wire.connection import ConnectionInfo, PROTOCOL_VERSION
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.wire.vocabulary import EndReason
from meshdbg.worker.remote import RemoteSession


def test_a_refused_session_retries_until_the_server_has_room() -> None:
    started = threading.Event()
    stop: list[asyncio.Event] = []
    addr: list[str] = []

    async def serve() -> None:
        server = grpc.aio.server(interceptors=[TokenInterceptor("t")], maximum_concurrent_rpcs=1)
        pb_grpc.add_DebuggerServicer_to_server(DebuggerServicer(SessionRegistry()), server)
        addr.append(f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}")
        await server.start()
        stop.append(asyncio.Event())
        started.set()
        await stop[0].wait()
        await server.stop(0)

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10)
    connection = ConnectionInfo(addr[0], "t")
    try:
        first = RemoteSession(lambda: connection, pb.Identity(rank=0, protocol_version=PROTOCOL_VERSION))
        second: list[RemoteSession | Exception] = []

        def open_second() -> None:
            try:
                second.append(RemoteSession(lambda: connection, pb.Identity(rank=1, protocol_version=PROTOCOL_VERSION)))
            except Exception as exc:  # the test reports it below
                second.append(exc)

        opener = threading.Thread(target=open_second)
        opener.start()
        opener.join(0.5)
        assert opener.is_alive() and not second, "the second session did not wait for room"
        first.end("", EndReason.CONTINUED)
        opener.join(20)
        assert second and isinstance(second[0], RemoteSession), second
        second[0].end("", EndReason.CONTINUED)
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(10)
