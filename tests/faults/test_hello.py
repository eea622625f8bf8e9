"""A worker stream's opening: a deadline for its hello, a size limit, and printable identities.

In-process server (a real grpc.aio server on loopback) so the hello deadline can be short.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from meshdbg.debugger import servicer
from meshdbg.debugger.service import DebugClient
from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc


async def with_server(body) -> object:
    return await with_channel(lambda channel, metadata: body(pb_grpc.DebuggerStub(channel), metadata))


async def with_channel(body) -> object:
    server = DebugClient(publish=False)
    connection = await server.start()
    try:
        async with grpc.aio.insecure_channel(connection.addr) as channel:
            return await body(channel, connection.metadata())
    finally:
        await server.stop(0)


def test_a_stream_that_never_says_hello_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servicer, "HELLO_TIMEOUT_S", 0.5)

    async def body(stub: pb_grpc.DebuggerStub, metadata) -> grpc.aio.AioRpcError:
        for call in (stub.Session(metadata=metadata), stub.Attach(metadata=metadata)):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await asyncio.wait_for(call.read(), 5)
            assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "sent nothing in 0.5 s; closed" in refused.value.details()

    asyncio.run(with_server(body))


def test_an_oversized_hello_is_refused_clearly() -> None:
    async def body(stub: pb_grpc.DebuggerStub, metadata) -> None:
        call = stub.Session(metadata=metadata)
        await call.write(pb.WorkerMessage(hello=pb.Identity(name="n" * 100_000, protocol_version=PROTOCOL_VERSION)))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await asyncio.wait_for(call.read(), 5)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "over the limit of 65,536" in refused.value.details()

    asyncio.run(with_server(body))


def test_identity_text_is_made_printable() -> None:
    async def body(stub: pb_grpc.DebuggerStub, metadata) -> pb.ListReply:
        call = stub.Session(metadata=metadata)
        await call.write(pb.WorkerMessage(hello=pb.Identity(
            name="evil\x1b]0;owned\x07", hostname="h\u202eost", thread_name="t\r", context={"k\x1b": "v\x9b"},
            protocol_version=PROTOCOL_VERSION)))
        await asyncio.wait_for(call.read(), 5)  # the welcome
        listing = await stub.List(pb.ListRequest(), metadata=metadata)
        call.cancel()
        return listing

    (session,) = asyncio.run(with_server(body)).sessions
    ident = session.identity
    assert ident.name == "evil\\x1b]0;owned\\x07" and ident.hostname == "h\\u202eost" and ident.thread_name == "t\\r"
    assert dict(ident.context) == {"k\\x1b": "v\\x9b"}


@pytest.mark.parametrize("opening", [[b"\xff\xff"], [pb.WorkerMessage(hello=pb.Identity(
    protocol_version=PROTOCOL_VERSION)).SerializeToString(), b"\xff\xff"]], ids=["as its hello", "after its hello"])
def test_bytes_that_are_no_worker_message_end_the_stream_invalid_argument(opening: list[bytes]) -> None:
    """A session stream reads its requests off its context (no request iterator decodes them): a
    malformed one is still INVALID_ARGUMENT naming it, not the UNKNOWN of a server bug."""
    async def body(channel: grpc.aio.Channel, metadata) -> None:
        call = channel.stream_stream("/meshdbg.v1.Debugger/Session")(metadata=metadata)  # raw bytes each way
        for raw in opening:
            await call.write(raw)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            while True:
                await asyncio.wait_for(call.read(), 5)  # the welcome, when the hello was one
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "malformed request" in refused.value.details()

    asyncio.run(with_channel(body))
