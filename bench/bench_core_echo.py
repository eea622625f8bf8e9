"""The floors for bench_core: raw gRPC streams with meshdbg's shape and none of its logic.

- `python bench_core_echo.py` serves `/bench.Echo/Echo`, a grpc.aio bidirectional echo: one
  hop, the floor the issue names.
- `python bench_core_echo.py --relay` serves `/bench.Relay/Client` and `/bench.Relay/Worker`
  and `--worker ADDR` dials the latter with a synchronous stream and echoes: two hops, the
  same path as an attached pdb command (control client → server → worker and back), with
  the same gRPC stacks on each side. With several workers connected the relay fans each
  client message out to all of them and streams every answer back: the floor of a cast or
  a continue. `--relay --uvloop` runs the relay on uvloop's event loop, as meshdbg's server
  runs (bench_least_path.py's reference). `--polled-worker ADDR` echoes as `--worker` does, on
  a call the waiting thread polls itself (PolledEcho: what a worker's threading could save).
  `--aio-workers ADDR N` dials N echoing grpc.aio streams from one process (the
  floor of simulated sessions, bench_scale_worker.py --answer). Every worker stream opens as a
  meshdbg session does, with messages of the same sizes (a hello in, a welcome out, a prompt
  in), and the relay keeps the hello and the prompt, as a server keeps who a session is and
  where it stands: a live stopped session's memory is counted against such a stream's.
- Every server also serves `/bench.Blob/Set` and `/bench.Blob/Get`: a unary call that
  returns the bytes last set, the floor of a `List` of the same bytes.

Generic handlers and raw bytes, no .proto. Each server prints its port on its first line;
`measure_floor` times write-then-read round trips of one stream from another process.
"""

from __future__ import annotations

import asyncio
import collections
import importlib
import queue
import sys
import threading
import time
from typing import AsyncIterator, Callable

import grpc
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # (no stubs for gRPC's Cython core)

METHOD = "/bench.Echo/Echo"
RELAY_METHOD = "/bench.Relay/Client"
# A worker stream's opening, the sizes of a simulated session's (bench_scale_worker.py): its
# hello (identity), the server's welcome (session id), its first prompt (prompt and frame).
HELLO, WELCOME, PROMPT = b"h" * 66, b"w" * 5, b"p" * 43
_NO_FLAGS = 0  # a gRPC core operation's flags


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


class Relay:
    """Forwards each client message to every connected worker and their answers back."""

    def __init__(self) -> None:
        self.workers: list[grpc.aio.ServicerContext] = []
        self.opened: list[tuple[bytes, bytes]] = []  # each worker's hello and prompt
        self.answers: asyncio.Queue[bytes] = asyncio.Queue()
        self.worker_ready = asyncio.Event()

    async def from_worker(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        requests = aiter(requests)
        hello = await anext(requests)
        await context.write(WELCOME)
        self.opened.append((hello, await anext(requests)))
        self.workers.append(context)
        self.worker_ready.set()
        async for answer in requests:
            self.answers.put_nowait(answer)

    async def from_client(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        await self.worker_ready.wait()
        async for request in requests:
            workers = list(self.workers)
            await asyncio.gather(*(worker.write(request) for worker in workers))
            for _ in workers:
                await context.write(await self.answers.get())

    async def count(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        """How many workers are connected (as decimal text)."""
        return str(len(self.workers)).encode()


def relay_handler(hops: Relay) -> grpc.GenericRpcHandler:
    """`/bench.Relay/*` served by `hops` (bench_floor.py also serves it in its own process:
    the one-hop floor of a console that shares the server's process)."""
    return grpc.method_handlers_generic_handler("bench.Relay", {
        "Client": grpc.stream_stream_rpc_method_handler(hops.from_client),
        "Worker": grpc.stream_stream_rpc_method_handler(hops.from_worker),
        "Count": grpc.unary_unary_rpc_method_handler(hops.count)})


class _Blob:
    """One byte string, set and got by unary calls."""

    def __init__(self) -> None:
        self.blob = b""

    async def set(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.blob = request
        return b""

    async def get(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return self.blob


def echo_as_worker(addr: str) -> None:
    """Dial the relay like a meshdbg worker (sync stream, queue-fed requests) and echo."""
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    outgoing.put(HELLO)
    with grpc.insecure_channel(addr) as channel:
        messages = channel.stream_stream("/bench.Relay/Worker")(iter(outgoing.get, None))
        next(messages)  # the welcome
        outgoing.put(PROMPT)
        for message in messages:
            outgoing.put(message)


class PolledEcho:
    """`--worker`'s echo on a stream whose completion queue is its own (grpc's segregated
    call, as a single-threaded unary-stream call has), polled by the thread that waits (for a
    message, or for its last send to complete), or by a helper thread while none waits; an
    empty batch (`_WAKE`) makes the helper's poll return, so that the waiting thread polls.

    A sync stream-stream call is otherwise polled by the channel's spin thread, which hands
    each message to the waiting thread: a wake-up and a GIL hand-off more per message. This is
    what bench_least_path.py's two_hop_echo_polled measures; meshdbg's worker does the same on
    its main thread (meshdbg.worker.polled; this floor keeps none of meshdbg's code). As
    gRPC's own streams do, a send waits for the one before it: gRPC refuses a second message
    in flight (call error 8, "too many operations"), which a loaded machine makes happen.
    """

    _WAKE, _SENT = object(), object()

    def __init__(self, addr: str) -> None:
        self._channel = grpc.insecure_channel(addr)
        opening = (((cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS), cygrpc.SendMessageOperation(HELLO, _NO_FLAGS)),
                    self._SENT),
                   ((cygrpc.ReceiveStatusOnClientOperation(_NO_FLAGS),), None),
                   ((cygrpc.ReceiveInitialMetadataOperation(_NO_FLAGS),), None),
                   ((cygrpc.ReceiveMessageOperation(_NO_FLAGS),), None))
        self._call = self._channel._channel.segregated_call(  # type: ignore[attr-defined]
            cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS, b"/bench.Relay/Worker", None, None, None, None,
            opening, cygrpc.build_census_context(), None)
        self._condition = threading.Condition()
        self._helper_polling = False  # the helper is inside the poll (the waiter polls only while `_waiting`)
        self._waiting = False
        self._woken = False  # a _WAKE is on its way to the helper's poll
        self._sending = True  # a message is in flight (the hello, at first)
        self._over = False
        self._inbox: collections.deque[bytes] = collections.deque()
        threading.Thread(target=self._help, daemon=True).start()

    def send(self, message: bytes) -> None:
        """Send `message` once the one before it is out (nothing, once the stream is over)."""
        with self._condition:
            self._until(lambda: not self._sending)
            if not self._over:
                self._sending = True
                self._call.operate((cygrpc.SendMessageOperation(message, _NO_FLAGS),), self._SENT)

    def receive(self) -> bytes | None:
        """The next message (None once the stream is over)."""
        with self._condition:
            self._until(lambda: bool(self._inbox))
            return self._inbox.popleft() if self._inbox else None

    def _until(self, done: Callable[[], bool]) -> None:
        """Poll, or have the helper's poll woken and wait, until `done()` or the stream is
        over (the condition held)."""
        self._waiting = True
        while not done() and not self._over:
            if self._helper_polling:
                if not self._woken:
                    self._woken = True
                    self._call.operate((), self._WAKE)
                self._condition.wait()
            else:
                self._poll()
        self._waiting = False
        self._condition.notify_all()

    def _help(self) -> None:
        with self._condition:
            while not self._over:
                if self._waiting:
                    self._condition.wait()
                else:
                    self._helper_polling = True
                    self._poll()
                    self._helper_polling = False

    def _poll(self) -> None:
        """Take one event of the call (the condition held, released while polling)."""
        self._condition.release()
        try:
            event = self._call.next_event()
        finally:
            self._condition.acquire()
        self._condition.notify_all()
        if event.tag is self._WAKE:
            self._woken = False
            return
        if event.tag is self._SENT:
            self._sending = False
            return
        for operation in event.batch_operations:
            if operation.type() == cygrpc.OperationType.receive_message:
                message = operation.message()
                if message is None:
                    self._over = True
                else:
                    self._inbox.append(message)
                    self._call.operate((cygrpc.ReceiveMessageOperation(_NO_FLAGS),), None)
            elif operation.type() == cygrpc.OperationType.receive_status_on_client:
                self._over = True


def echo_polled(addr: str) -> None:
    """`--worker`'s echo on a PolledEcho stream."""
    stream = PolledEcho(addr)
    stream.receive()  # the welcome
    stream.send(PROMPT)
    while (message := stream.receive()) is not None:
        stream.send(message)


async def echo_as_aio_workers(addr: str, count: int, per_channel: int = 200) -> None:
    """Dial the relay with `count` grpc.aio streams (`per_channel` to a connection) and echo
    on each until terminated."""
    channels = [grpc.aio.insecure_channel(addr) for _ in range((count + per_channel - 1) // per_channel)]

    async def echo(channel: grpc.aio.Channel) -> None:
        call = channel.stream_stream("/bench.Relay/Worker")()
        await call.write(HELLO)
        await call.read()  # the welcome
        await call.write(PROMPT)
        while isinstance(message := await call.read(), bytes):
            await call.write(message)

    await asyncio.gather(*(echo(channels[index // per_channel]) for index in range(count)))


async def serve(relay: bool = False) -> None:
    """Serve the echo (or the relay), and the blob, until terminated."""
    # As meshdbg's server (debugger/service.py), a burst of streams past gRPC's default of 1,000
    # waiting for the server to take them is queued, not cancelled. The relay keeps gRPC's limit
    # on what it receives (4 MiB), as meshdbg's server does: without it a stream holds ~1.9 KiB
    # less of gRPC's own state (its message-size check), which a server facing workers keeps.
    # The echo server takes a listing of any size (`/bench.Blob/Set`) and lifts it.
    limits = [] if relay else [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
    server = grpc.aio.server(options=[*limits, ("grpc.server.max_pending_requests", 3000),
                                      ("grpc.server.max_pending_requests_hard_limit", 3000)])
    if relay:
        server.add_generic_rpc_handlers([relay_handler(Relay())])
    else:
        handler = grpc.stream_stream_rpc_method_handler(_echo)
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler})])
    blob = _Blob()
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("bench.Blob", {
        "Set": grpc.unary_unary_rpc_method_handler(blob.set), "Get": grpc.unary_unary_rpc_method_handler(blob.get)})])
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
            await round_trip(call, payload)
            if index >= warmup:
                samples.append(time.perf_counter() - start)
        await call.done_writing()
        return samples


async def round_trip(call: grpc.aio.StreamStreamCall, payload: bytes, answers: int = 1) -> None:
    """Write `payload` on `call`, then read `answers` messages (one per worker of a relay)."""
    await call.write(payload)
    for _ in range(answers):
        await call.read()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        echo_as_worker(sys.argv[2])
    elif sys.argv[1:2] == ["--polled-worker"]:
        echo_polled(sys.argv[2])
    elif sys.argv[1:2] == ["--aio-workers"]:
        asyncio.run(echo_as_aio_workers(sys.argv[2], int(sys.argv[3])))
    else:  # `--relay --uvloop`: the relay on uvloop's event loop, as meshdbg's servers run (imported only then)
        with asyncio.Runner(loop_factory=importlib.import_module("uvloop").new_event_loop
                            if "--uvloop" in sys.argv else None) as runner:
            runner.run(serve(relay=sys.argv[1:2] == ["--relay"]))
