"""The floor for bench_core: a raw grpc.aio bidirectional-stream echo, server and client.

Run as a script it serves `/bench.Echo/Echo` (generic handlers, raw bytes, no .proto) on a
free loopback port and prints the port on its first line; `measure_floor` times round trips
of one stream to it from another process, as the control client reaches the DebugClient.
"""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator

import grpc

METHOD = "/bench.Echo/Echo"


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


async def serve() -> None:
    """Serve the echo method until terminated."""
    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(_echo)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    try:
        await server.wait_for_termination()
    finally:
        await server.stop(None)


async def measure_floor(addr: str, payload: bytes, warmup: int, count: int) -> list[float]:
    """Seconds per write-then-read round trip on one echo stream, after `warmup` untimed ones."""
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.stream_stream(METHOD)()
        samples = []
        for index in range(warmup + count):
            start = time.perf_counter()
            await call.write(payload)
            await call.read()
            if index >= warmup:
                samples.append(time.perf_counter() - start)
        await call.done_writing()
        return samples


if __name__ == "__main__":
    asyncio.run(serve())
