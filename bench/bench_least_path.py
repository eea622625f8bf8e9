"""Where attached `p x` spends its time beyond the raw floor: each of meshdbg's three processes
swapped in, one at a time, for the least a pdb-over-protobuf process can do.

    python bench/bench_least_path.py [--reps N]

bench_floor.py compares attached `p x` with a two-hop raw echo (bytes, no pdb, no protobuf).
No debugger can reach that: a worker runs pdb's command, every hop parses and builds protobuf
messages. This measures, interleaved in one run, against that same echo:

| path | client | server | worker |
|---|---|---|---|
| two_hop_echo_uvloop | raw stream | the echo's relay on uvloop | the echo's |
| two_hop_echo_polled | raw stream | the echo's relay | the echo's, polling its own call (`--polled-worker`) |
| least | raw stream | least server | least worker |
| meshdbg_worker | raw stream | least server | meshdbg's (bench_core_worker.py) |
| meshdbg_server | raw stream on `Attach` | `meshdbg serve` | meshdbg's |
| meshdbg | `AttachedSession.send` | `meshdbg serve` | meshdbg's |

The least server (`--server`) parses each request and builds the message it forwards, nothing
else (no session, no auth, no transcript); the least worker (`--worker ADDR`) is `pdb.Pdb`
whose stdin and stdout are one synchronous stream, threaded as the echo worker is. Each line
of output is {"path", "ms", "ratio"} (the ratio to the two-hop echo); the difference between
two consecutive paths is what that process of meshdbg's costs over the least one. `meshdbg
serve` runs on uvloop's event loop (meshdbg.debugger.cli.loop_factory), the least server and
the echo's relay on asyncio's: two_hop_echo_uvloop shows what that loop alone is worth to the
floor, and two_hop_echo_polled what the echo worker gains by polling its own call (its thread
takes each message off the stream itself, not from gRPC's channel thread), as meshdbg's worker
does on its main thread (meshdbg.worker.polled).

A second phase does the same for `p x` inside `meshdbg run` (bench_floor.py's run_p): one hop,
from a server in the bench's own process and loop (the loop `meshdbg run` runs on), against
run_p's floor, that process writing to the sync echo worker:

| path | server, in this process | worker |
|---|---|---|
| one_hop_echo | the echo's relay | the echo's (run_p's floor) |
| one_hop_least | least server | least worker |
| one_hop_meshdbg_worker | least server | meshdbg's |
| one_hop_meshdbg | `DebugClient` and `ControlClient.beside`, as `meshdbg run`'s console | meshdbg's |

Each line of output names its `floor` (two_hop_echo or one_hop_echo). Both phases: about 10 s.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import pdb
import queue
import secrets
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import grpc

from bench_core import BenchError, Processes, ran, wait_stopped, worker_env
from bench_core_echo import RELAY_METHOD, Relay, relay_handler, round_trip
from bench_floor import PAYLOAD
from bench_floor_measure import STOP_TIMEOUT_S, blocks, interleaved
from bench_floor_process import STOP_GRACE_S

from meshdbg.debugger.cli import loop_factory
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.proto import debugger_pb2 as pb

HERE = Path(__file__).resolve().parent
LEAST_CLIENT, MESHDBG_WORKER_CLIENT = "/least.Relay/Client", "/least.Relay/MeshdbgWorkerClient"
LINE = "p x"


class LeastRelay:
    """Forwards one client's pdb lines to one worker and its prompts back, as protobuf."""

    def __init__(self) -> None:
        self.worker: grpc.aio.ServicerContext | None = None
        self.ready = asyncio.Event()
        self.prompts: asyncio.Queue[pb.Prompt] = asyncio.Queue()

    async def from_worker(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        requests = aiter(requests)
        pb.WorkerMessage.FromString(await anext(requests))  # the hello
        await context.write(pb.ServerMessage(welcome=pb.Welcome(session_id=1)).SerializeToString())
        pb.WorkerMessage.FromString(await anext(requests))  # the first prompt
        self.worker = context
        self.ready.set()
        async for message in requests:
            self.prompts.put_nowait(pb.WorkerMessage.FromString(message).prompt)

    async def from_client(self, requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> None:
        await self.ready.wait()
        async for request in requests:
            prompt = await self.ask(pb.AttachRequest.FromString(request).input.line)
            await context.write(pb.AttachEvent(reply=pb.Reply(output=prompt.output, prompt=prompt.prompt))
                                .SerializeToString())

    async def ask(self, line: str) -> pb.Prompt:
        """`line` to the worker, and the prompt it answers with."""
        assert self.worker is not None
        await self.worker.write(pb.ServerMessage(input=pb.Input(line=line)).SerializeToString())
        return await self.prompts.get()


def least_server(least: LeastRelay, for_meshdbg_worker: LeastRelay) -> grpc.aio.Server:
    """The least server, for a least worker (`/least.Relay/*`, `least`) and for a meshdbg
    worker (its `Session` stream, `for_meshdbg_worker`); not started."""
    stream = grpc.stream_stream_rpc_method_handler
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([
        grpc.method_handlers_generic_handler("least.Relay", {
            "Client": stream(least.from_client), "Worker": stream(least.from_worker),
            "MeshdbgWorkerClient": stream(for_meshdbg_worker.from_client)}),
        grpc.method_handlers_generic_handler("meshdbg.v1.Debugger", {"Session": stream(for_meshdbg_worker.from_worker)})])
    return server


async def serve_least() -> None:
    """The least server, until terminated; prints its port first."""
    server = least_server(LeastRelay(), LeastRelay())
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


class _Written(io.TextIOBase):
    """pdb's stdout: kept until the next prompt."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)


def least_worker(addr: str) -> None:
    """Stop in pdb with `x` in scope, pdb's stdin and stdout over one stream (a request thread
    sends, this thread reads), until the stream ends."""
    outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    outgoing.put(pb.WorkerMessage(hello=pb.Identity(rank=0)).SerializeToString())
    with grpc.insecure_channel(addr) as channel:
        messages = channel.stream_stream("/least.Relay/Worker")(iter(outgoing.get, None))
        next(messages)  # the welcome
        written = _Written()

        class RemoteStdin:
            def readline(self) -> str:
                text, prompt = "".join(written.parts), "(Pdb) "
                written.parts.clear()
                outgoing.put(pb.WorkerMessage(prompt=pb.Prompt(output=text.removesuffix(prompt), prompt=prompt))
                             .SerializeToString())
                return pb.ServerMessage.FromString(next(messages)).input.line + "\n"

        debugger = pdb.Pdb(stdin=RemoteStdin(), stdout=written)  # type: ignore[arg-type]
        debugger.use_rawinput = False
        x = {"rank": 0, "round": 0, "loss": 0.0}  # what `p x` prints
        debugger.set_trace()
        del x


def measure(reps: int) -> int:
    """Run the paths, print their lines; 1 (and why, on stderr) if the system under test misbehaved."""
    with tempfile.TemporaryDirectory(prefix="meshdbg-least-") as tmp, open(Path(tmp) / "log", "wb") as log:
        for phase, on in ((_measure, None), (_measure_one_hop, loop_factory("run"))):
            if not ran("bench_least_path", lambda procs, phase=phase: phase(Bench(procs, Path(tmp)), reps), log,
                       Path(tmp) / "log", on):
                return 1
    return 0


class Bench:
    """What both phases spawn their processes with."""

    def __init__(self, procs: Processes, tmp: Path) -> None:
        self.procs = procs
        self.token = secrets.token_urlsafe(32)
        self.env = {**os.environ, "MESHDBG_TOKEN": self.token, "MESHDBG_CONNECTION_FILE": str(tmp / "connection.json")}
        self.env.pop("MESHDBG_ADDR", None)

    async def address_of(self, argv: list[str], what: str) -> str:
        """The address a server printed first (a port alone is on loopback)."""
        line = await self.procs.first_line(self.procs.spawn(argv, self.env, stdout=subprocess.PIPE, serves=True), what)
        return line if ":" in line else f"127.0.0.1:{line}"

    def meshdbg_worker(self, addr: str, rank: int) -> None:
        self.procs.spawn([sys.executable, str(HERE / "bench_core_worker.py"), "1", "0"],
                         worker_env({**self.env, "MESHDBG_ADDR": addr}, rank))


def report(samples: dict[str, list[float]], floor_path: str) -> None:
    """A line per path: its median, and its ratio to `floor_path`'s."""
    floor = statistics.median(samples[floor_path])
    for path, seconds in samples.items():
        median = statistics.median(seconds)
        print(json.dumps({"path": path, "ms": float(f"{median * 1e3:.4g}"), "ratio": round(median / floor, 2),
                          "floor": floor_path}), flush=True)


def checked(prompt_output: str, how: str) -> None:
    """BenchError unless `prompt_output` is `p x`'s."""
    if "'rank'" not in prompt_output:
        raise BenchError(f"unexpected reply to {LINE!r} {how}: {prompt_output!r}")


async def _measure(bench: Bench, reps: int) -> None:
    procs, env, token, address_of, meshdbg_worker = bench.procs, bench.env, bench.token, bench.address_of, bench.meshdbg_worker
    me, echo = str(Path(__file__).resolve()), str(HERE / "bench_core_echo.py")

    relay = await address_of([sys.executable, echo, "--relay"], "the relay")
    procs.spawn([sys.executable, echo, "--worker", relay], env, serves=True)
    relay_uvloop = await address_of([sys.executable, echo, "--relay", "--uvloop"], "the relay on uvloop")
    procs.spawn([sys.executable, echo, "--worker", relay_uvloop], env, serves=True)
    relay_polled = await address_of([sys.executable, echo, "--relay"], "the relay of the polled worker")
    procs.spawn([sys.executable, echo, "--polled-worker", relay_polled], env, serves=True)
    least = await address_of([sys.executable, me, "--server"], "the least server")
    procs.spawn([sys.executable, me, "--worker", least], env, serves=True)
    meshdbg_worker(least, 0)
    serve = await address_of([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], "meshdbg serve")
    meshdbg_worker(serve, 0)
    meshdbg_worker(serve, 1)
    request = pb.AttachRequest(input=pb.Input(line=LINE))
    async with ControlClient(ConnectionInfo(serve, token)) as client, \
            grpc.aio.insecure_channel(relay) as relay_channel, grpc.aio.insecure_channel(least) as least_channel, \
            grpc.aio.insecure_channel(relay_uvloop) as relay_uvloop_channel, \
            grpc.aio.insecure_channel(relay_polled) as relay_polled_channel:
        await wait_stopped(client, 2, STOP_TIMEOUT_S)
        hop = relay_channel.stream_stream(RELAY_METHOD)()
        hop_uvloop = relay_uvloop_channel.stream_stream(RELAY_METHOD)()
        hop_polled = relay_polled_channel.stream_stream(RELAY_METHOD)()
        raw_attach = client.stub.Attach(metadata=client.connection.metadata())
        await raw_attach.write(pb.AttachRequest(target=pb.AttachTarget(rank=pb.RankTarget(rank=1))))
        await raw_attach.read(), await raw_attach.read()  # attached, the replay

        def raw_p(call: grpc.aio.StreamStreamCall, serialized: bool) -> Callable[[], Awaitable[None]]:
            """`p x` written and its reply read on `call` (`serialized`: a generic stream of bytes)."""
            async def p_x() -> None:
                await call.write(request.SerializeToString() if serialized else request)
                event = await call.read()
                checked((pb.AttachEvent.FromString(event) if serialized else event).reply.output, "on a stream")
            return p_x

        async with client.attach(rank=0) as attached:
            async def api_p() -> None:
                checked((await attached.send(LINE)).output, "through the API")

            measures = {
                "two_hop_echo": blocks(lambda: round_trip(hop, PAYLOAD), 20),
                "two_hop_echo_uvloop": blocks(lambda: round_trip(hop_uvloop, PAYLOAD), 20),
                "two_hop_echo_polled": blocks(lambda: round_trip(hop_polled, PAYLOAD), 20),
                "least": blocks(raw_p(least_channel.stream_stream(LEAST_CLIENT)(), True), 20),
                "meshdbg_worker": blocks(raw_p(least_channel.stream_stream(MESHDBG_WORKER_CLIENT)(), True), 20),
                "meshdbg_server": blocks(raw_p(raw_attach, False), 20),
                "meshdbg": blocks(api_p, 20)}
            for each in measures.values():  # warm-up
                await each()
            samples = await interleaved(measures, reps)
        report(samples, "two_hop_echo")
        raw_attach.cancel()
        await client.resume("all")


async def _measure_one_hop(bench: Bench, reps: int) -> None:
    """The one-hop paths: every server in this process, on this loop (the one `meshdbg run` runs on)."""
    echo_relay, least, for_meshdbg_worker = Relay(), LeastRelay(), LeastRelay()
    servers = least_server(least, for_meshdbg_worker)
    servers.add_generic_rpc_handlers([relay_handler(echo_relay)])
    addr = f"127.0.0.1:{servers.add_insecure_port('127.0.0.1:0')}"
    await servers.start()
    debugger = DebugClient(token=bench.token, publish=False, what="bench_least_path")
    await debugger.start()
    # The echoing workers are ended first, at the end, so that their handlers here end by
    # themselves (a handler cancelled by the server's stop has gRPC print its CancelledError).
    echoing_workers = [bench.procs.spawn([sys.executable, script, "--worker", addr], bench.env)
                       for script in (str(HERE / "bench_core_echo.py"), str(Path(__file__).resolve()))]
    try:
        async with ControlClient.beside(debugger) as client:
            bench.meshdbg_worker(addr, 0)
            bench.meshdbg_worker(client.connection.addr, 0)
            await wait_stopped(client, 1, STOP_TIMEOUT_S)
            for ready in (echo_relay.worker_ready, least.ready, for_meshdbg_worker.ready):
                await asyncio.wait_for(ready.wait(), STOP_TIMEOUT_S)
            echoing = echo_relay.workers[-1]

            async def one_hop_echo() -> None:
                await echoing.write(PAYLOAD)
                await echo_relay.answers.get()

            def one_hop_p(relay: LeastRelay) -> Callable[[], Awaitable[None]]:
                async def p_x() -> None:
                    checked((await relay.ask(LINE)).output, "over one hop")
                return p_x

            async with client.attach(rank=0) as attached:
                async def run_p() -> None:
                    checked((await attached.send(LINE)).output, "inside the server's process")

                measures = {"one_hop_echo": blocks(one_hop_echo, 20), "one_hop_least": blocks(one_hop_p(least), 20),
                            "one_hop_meshdbg_worker": blocks(one_hop_p(for_meshdbg_worker), 20),
                            "one_hop_meshdbg": blocks(run_p, 20)}
                for each in measures.values():  # warm-up
                    await each()
                report(await interleaved(measures, reps), "one_hop_echo")
            await client.resume("all")
            assert for_meshdbg_worker.worker is not None
            await for_meshdbg_worker.worker.write(pb.ServerMessage(resume=pb.Resume()).SerializeToString())
    finally:
        for worker in echoing_workers:
            worker.terminate()
            await asyncio.to_thread(worker.wait)
        await debugger.stop(0)
        await servers.stop(STOP_GRACE_S)


def _positive(text: str) -> int:
    """A count of at least 1 (argparse's type check)."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive whole number: {text!r}")
    return int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description="Attached `p x` with each of meshdbg's processes swapped in for the "
                                                 "least pdb-over-protobuf one, against the two-hop echo.")
    parser.add_argument("--reps", type=_positive, default=60, help="blocks of 20 round trips per path (default 60)")
    parser.add_argument("--server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker", metavar="ADDR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server:
        asyncio.run(serve_least())
    elif args.worker:
        least_worker(args.worker)
    else:
        return measure(args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
