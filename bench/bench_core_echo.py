"""The floors for bench_core: raw gRPC streams with meshdbg's shape and none of its logic.

- `python bench_core_echo.py` serves `/bench.Echo/Echo`, a grpc.aio bidirectional echo: one
  hop, the floor the issue names.
- `python bench_core_echo.py --relay` serves `/bench.Relay/Client` and `/bench.Relay/Worker`
  and `--worker ADDR` dials the latter with a synchronous stream and echoes: two hops, the
  same path as an attached pdb command (control client → server → worker and back), with
  the same gRPC stacks on each side.

Generic handlers and raw bytes, no .proto. Each server prints its port on its first line;
`measure_floor` times write-then-read round trips of one stream from another process.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import time
from typing import AsyncIterator

import grpc

METHOD = "/bench.Echo/Echo"
RELAY_METHOD = "/bench.Relay/Client"


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


class _Relay:
    """Forwards each client message to the one connected worker and its answer back."""

    def __init__(self) -> None:
        self.worker: grpc.aio.ServicerContext | None = None
        self.worker_ready = asyncio.Event()
        self.answer: asyncio.Future[bytes] | None = None

    async def from_worker(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        self.worker = context
        self.worker_ready.set()
        async for answer in requests:
            if self.answer is not None and not self.answer.done():
                self.answer.set_result(answer)

    async def from_client(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        await self.worker_ready.wait()
        async for request in requests:
            self.answer = asyncio.get_running_loop().create_future()
            await self.worker.write(request)
            await context.write(await self.answer)


def echo_as_worker(addr: str) -> None:
    """Dial the relay like a meshdbg worker (sync stream, queue-fed requests) and echo."""
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    with grpc.insecure_channel(addr) as channel:
        for message in channel.stream_stream("/bench.Relay/Worker")(iter(outgoing.get, None)):
            outgoing.put(message)


async def serve(relay: bool = False) -> None:
    """Serve the echo (or the relay) until terminated."""
    server = grpc.aio.server()
    if relay:
        hops = _Relay()
        handlers = {"Client": grpc.stream_stream_rpc_method_handler(hops.from_client),
                    "Worker": grpc.stream_stream_rpc_method_handler(hops.from_worker)}
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Relay", handlers)])
    else:
        handler = grpc.stream_stream_rpc_method_handler(_echo)
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    try:
        await server.wait_for_termination()
    finally:
        await server.stop(None)


async def measure_floor(addr: str, payload: bytes, warmup: int, count: int, method: str = METHOD) -> list[float]:
    """Seconds per write-then-read round trip on one stream, after `warmup` untimed ones."""
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.stream_stream(method)()
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
    if sys.argv[1:2] == ["--worker"]:
        echo_as_worker(sys.argv[2])
    else:
        asyncio.run(serve(relay=sys.argv[1:2] == ["--relay"]))
