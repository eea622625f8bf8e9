"""`meshdbg run`'s console calls its server's handlers in-process (ControlClient.beside,
meshdbg.debugger.local_channel): it must get exactly what a client over a socket gets, errors
included, and keep what gRPC guarantees a server (flow control, cancellation, the end of every
call when the server stops)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import grpc
import pytest

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.local_channel import RESPONSE_WINDOW, LocalChannel, MethodTable
from meshdbg.debugger.service import DebugClient
from meshdbg.debugger.answers import Shared
from meshdbg.wire.errors import ConnectionFailed, NoMatchError
from meshdbg.wire.vocabulary import State

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


async def beside_a_stopped_worker(tmp_path: Path, body: Callable[[DebugClient], Awaitable[None]]) -> None:
    """Run `body` with an in-process server where tests/scripts/hold.py (rank 0) is stopped."""
    server = DebugClient(token="local-token", publish=False)
    connection = await server.start()
    env = {"MESHDBG_ADDR": connection.addr, "MESHDBG_TOKEN": connection.token, "MESHDBG_RANK": "0",
           "PYTHONBREAKPOINT": "meshdbg.worker.remote_breakpointhook", "PATH": "/usr/bin:/bin",
           "MESHDBG_RUNTIME_DIR": str(tmp_path)}
    worker = subprocess.Popen([sys.executable, str(SCRIPTS / "hold.py")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        async with ControlClient.beside(server) as client:
            async with asyncio.timeout(30):
                while not any(s.state is State.STOPPED for s in await client.list()):
                    await asyncio.sleep(0.05)
        await body(server)
    finally:
        worker.kill()
        worker.communicate(timeout=10)
        await server.stop(0)


def test_a_client_beside_its_server_gets_what_a_client_over_a_socket_gets(tmp_path: Path) -> None:
    async def body(server: DebugClient) -> None:
        async with ControlClient(server.connection) as remote, ControlClient.beside(server) as local:
            assert isinstance(local.channel, LocalChannel) and not isinstance(remote.channel, LocalChannel)
            listed = [[(s.id, s.rank, s.state, s.lineno) for s in await c.list()] for c in (remote, local)]
            assert listed[0] == listed[1] and len(listed[0]) == 1
            for client in (remote, local):
                async with client.attach(rank=0) as pdb:
                    replies = [await pdb.send(line) for line in ("p word", "p nosuch", "where")]
                    assert "'x'" in replies[0].output and "NameError" in replies[1].output
                    answered = [(r.output, r.prompt, r.lineno) for r in replies]
                if client is remote:
                    over_socket = answered
            assert answered == over_socket
            casts = [[(r.session.rank, r.output, r.ok) for r in await c.cast("all", "p rank")] for c in (remote, local)]
            assert casts[0] == casts[1] == [(0, "0\n", True)]
            refusals = []
            for client in (remote, local):
                with pytest.raises(NoMatchError) as refused:
                    async with client.attach(rank=9):
                        pass
                refusals.append(str(refused.value))
            assert refusals[0] == refusals[1]

    asyncio.run(beside_a_stopped_worker(tmp_path, body))


def test_an_attach_beside_its_server_sees_what_an_attach_over_a_socket_sees(tmp_path: Path) -> None:
    """The console's attach is answered in place (no stream: meshdbg.debugger.attached_client);
    each client attached the one way, then the other: the same replies to a large output and
    to Tab, the same view of the other client's lines, the same end when a third resumes."""
    async def both_ways(me: ControlClient, other: ControlClient) -> tuple[list[tuple[Any, ...]], list[str]]:
        """`me` attaches and runs a large output and a Tab, `other` a line; what each saw of the other."""
        mine: list[Shared] = []
        theirs: list[Shared] = []
        async with me.attach(rank=0, on_shared=mine.append) as pdb, other.attach(rank=0, on_shared=theirs.append) as peer:
            big = await pdb.send("p 'y' * 300_000")  # streamed in chunks, joined in the reply
            assert big.output == repr("y" * 300_000) + "\n"
            assert await pdb.complete("wo", "p wo", 2, 4) == ["word"]
            await peer.send("p word")
            async with asyncio.timeout(10):
                while not (any(shared.reply for shared in mine) and any(shared.reply for shared in theirs)):
                    await asyncio.sleep(0.01)
        return [(s.line, s.output, s.reply and s.reply.output) for s in mine], [s.line for s in theirs if s.line]

    async def body(server: DebugClient) -> None:
        async with ControlClient(server.connection) as remote, ControlClient.beside(server) as local:
            seen_over_socket, seen_in_place = await both_ways(remote, local), await both_ways(local, remote)
            assert seen_over_socket == seen_in_place
            assert seen_in_place == ([("p word", "", None), (None, "", "'x'\n")], ["p 'y' * 300_000"])
            async with remote.attach(rank=0) as over_socket, local.attach(rank=0) as in_place, \
                    ControlClient(server.connection) as third:
                await third.resume("all")
                async with asyncio.timeout(10):
                    ends = [await over_socket.wait_ended(), await in_place.wait_ended()]
                assert ends[0] == ends[1] and ends[0].ended and str(ends[0].reason) == "continued"

    asyncio.run(beside_a_stopped_worker(tmp_path, body))


def test_a_stopping_server_ends_the_calls_of_a_client_beside_it(tmp_path: Path) -> None:
    async def body(server: DebugClient) -> None:
        client = ControlClient.beside(server)
        watching = client.watch()
        await anext(watching)  # the watch is under way
        async with client.attach(rank=0) as pdb:
            await server.stop(0)
            async with asyncio.timeout(10):  # they end, as over a socket, instead of waiting forever
                with contextlib.suppress(ConnectionFailed):  # the server may end the watch first
                    async for _ in watching:
                        pass
                assert (await pdb.wait_ended()).ended
        with pytest.raises(ConnectionFailed):  # and no call runs on a stopped server
            await client.list()

    asyncio.run(beside_a_stopped_worker(tmp_path, body))


# ---- the channel's own guarantees, on a toy service ------------------------------------

class Toy:
    """Handlers that misbehave on purpose, and count what they wrote."""

    def __init__(self) -> None:
        self.written = 0
        self.kept: grpc.aio.ServicerContext | None = None
        self.cancelled = asyncio.Event()

    async def flood(self, request: bytes, context: grpc.aio.ServicerContext) -> None:
        try:
            for _ in range(10 * RESPONSE_WINDOW):
                await context.write(b"x")
                self.written += 1
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def abort(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await context.abort(grpc.StatusCode.NOT_FOUND, f"no {request.decode()}")
        return b""

    async def slow(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await asyncio.Event().wait()
        return b""

    async def keep(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.kept = context
        return b"kept"

    async def broken(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise ValueError("a bug")

    async def echo(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request.upper()


def toy_channel(toy: Toy) -> LocalChannel:
    table = MethodTable(grpc.aio.server())
    table.add_registered_method_handlers("toy.Toy", {
        "Flood": grpc.unary_stream_rpc_method_handler(toy.flood),
        "Abort": grpc.unary_unary_rpc_method_handler(toy.abort),
        "Slow": grpc.unary_unary_rpc_method_handler(toy.slow),
        "Broken": grpc.unary_unary_rpc_method_handler(toy.broken),
        "Keep": grpc.unary_unary_rpc_method_handler(toy.keep),
        "Echo": grpc.stream_stream_rpc_method_handler(toy.echo)})
    return LocalChannel(table)


async def idle_loop() -> None:
    """Let every ready task of this loop run until none is left to."""
    for _ in range(50):
        await asyncio.sleep(0)


def test_a_handler_writing_to_a_client_that_reads_nothing_waits_as_under_flow_control() -> None:
    async def body() -> None:
        toy = Toy()
        call: Any = toy_channel(toy).unary_stream("/toy.Toy/Flood")(b"")
        await idle_loop()
        assert toy.written == RESPONSE_WINDOW
        assert await call.read() == b"x"
        await idle_loop()
        assert toy.written == RESPONSE_WINDOW + 1
        call.cancel()
        await asyncio.wait_for(toy.cancelled.wait(), 5)  # a cancelled call cancels its handler

    asyncio.run(body())


def test_errors_reach_the_client_as_grpc_raises_them() -> None:
    async def body() -> None:
        channel = toy_channel(Toy())
        failures = {}
        for method, timeout in (("Abort", None), ("Slow", 0.05), ("Broken", None), ("Nope", None)):
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await channel.unary_unary(f"/toy.Toy/{method}")(b"rank", timeout=timeout)
            failures[method] = (failed.value.code(), failed.value.details())
        assert failures["Abort"] == (grpc.StatusCode.NOT_FOUND, "no rank")
        assert failures["Slow"][0] is grpc.StatusCode.DEADLINE_EXCEEDED
        assert failures["Broken"][0] is grpc.StatusCode.UNKNOWN and "a bug" in failures["Broken"][1]
        assert failures["Nope"][0] is grpc.StatusCode.UNIMPLEMENTED

        toy = Toy()
        assert await toy_channel(toy).unary_unary("/toy.Toy/Keep")(b"") == b"kept" and toy.kept is not None
        with pytest.raises(grpc.aio.UsageError):  # a write after the call ended, as gRPC refuses it
            await toy.kept.write(b"late")

        call: Any = channel.stream_stream("/toy.Toy/Echo")()
        for word in (b"a", b"b"):
            await call.write(word)
        await call.done_writing()
        assert [reply async for reply in call] == [b"A", b"B"]

    asyncio.run(body())
