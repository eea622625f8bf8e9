"""bench_floor.py's paths about one process: `p` inside `meshdbg run`, server memory per
session, and the start of a scripted CLI call.

- run_p: `meshdbg run` hosts the server and the console in one process and one event loop;
  its `p x` is timed the same way here (a `DebugClient` started in this process, the client
  `meshdbg run`'s console uses, `ControlClient.beside`, a real worker) against one hop: this process writing to a
  synchronous echo worker straight from its own grpc.aio server and reading the answer. In
  `run_rounds` rounds, each with a fresh worker and a fresh echo worker: on 2 cores where the
  scheduler puts a pair's threads moved one run's ratio from the next by up to 0.3 (a pair
  keeps its places for its life), so the figures are the median round's (`median_low`: a
  round's own), with every round's ratio beside them.
- memory: the server's resident memory per live stopped session (`meshdbg serve`, simulated
  sessions of bench_scale_worker.py) against a raw grpc.aio server's per worker stream (the
  relay of bench_core_echo.py: the stream opens with messages of a session's sizes, and the
  relay keeps what it was told, and gRPC's receive limit, as meshdbg's server); both counted
  from after a warm-up, over as many streams in as many connections.
- cli_start: a scripted `meshdbg list --json` (the installed script, a fresh process, a
  server with no session, bytecode caches on as for a user) against `python -c "import grpc"`.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

import grpc

from bench_core import BenchError, wait_stopped
from bench_core_echo import Relay, relay_handler
from bench_floor_measure import ME, STOP_TIMEOUT_S, CpuMeter, blocks, interleaved, p_x, timed

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient
from meshdbg.wire.connection import ConnectionInfo

if TYPE_CHECKING:
    from bench_floor import Bench

HERE = Path(__file__).resolve().parent
PAYLOAD = b"x" * 96  # about a `p x` reply: output, prompt and frame
STOP_GRACE_S = 2.0  # the in-process relay's handlers, left to end once their peer is gone
WARM_SESSIONS = 200  # streams opened before the first memory reading (allocator arenas, gRPC's pools)


async def inside_run(bench: Bench) -> None:
    """run_p: `p x` from a client sharing the server's process and loop, against one hop,
    in rounds of a fresh pair of workers each."""
    c = bench.config
    hops = Relay()
    relay = grpc.aio.server()
    relay.add_generic_rpc_handlers([relay_handler(hops)])
    relay_port = relay.add_insecure_port("127.0.0.1:0")
    await relay.start()
    server = DebugClient(token=bench.token, publish=False, what="bench_floor run_p")
    await server.start()
    meter = CpuMeter({"ours": {"central": [ME], "workers": []}, "floor": {"central": [ME], "workers": []}})
    rounds: list[dict[str, list[float]]] = []
    try:
        async with ControlClient.beside(server) as client:
            for _ in range(c.run_rounds):
                rounds.append(await _run_round(bench, client, hops, relay_port, meter))
    finally:
        await server.stop(0)
        await relay.stop(STOP_GRACE_S)
    ratios = [statistics.median(r["ours"]) / statistics.median(r["floor"]) for r in rounds]
    middle = rounds[ratios.index(statistics.median_low(ratios))]
    bench.report.ratio("run_p", "run_p", middle["ours"], middle["floor"], "one hop from the same process",
                       round_ratios=[round(ratio, 2) for ratio in ratios], cpu_us=meter.per_operation_us())


async def _run_round(bench: Bench, client: ControlClient, hops: Relay, relay_port: int, meter: CpuMeter
                     ) -> dict[str, list[float]]:
    """One round of run_p: a fresh real worker and a fresh echo worker, `p x` and the one hop
    interleaved; the seconds of each. The worker runs on and exits at the end, the echo is ended."""
    c = bench.config
    hops.worker_ready.clear()
    echo = bench.procs.spawn([sys.executable, str(HERE / "bench_core_echo.py"), "--worker", f"127.0.0.1:{relay_port}"],
                             bench.env)
    try:
        worker = bench.spawn_worker(client.connection.addr, rank=0, rounds=1)
        meter.sides["ours"]["workers"][:], meter.sides["floor"]["workers"][:] = [worker], [echo.pid]
        await wait_stopped(client, 1, STOP_TIMEOUT_S)
        await asyncio.wait_for(hops.worker_ready.wait(), STOP_TIMEOUT_S)
        echoing = hops.workers[-1]

        async def one_hop() -> None:
            await echoing.write(PAYLOAD)
            await hops.answers.get()

        async with client.attach(rank=0) as pdb:
            measures = {"ours": meter.metered("ours", blocks(p_x(pdb, 0), c.block)),
                        "floor": meter.metered("floor", blocks(one_hop, c.block))}
            for measure in measures.values():  # warm-up
                await measure()
            measured = await interleaved(measures, c.attach_reps)
        await client.resume("all", timeout_s=STOP_TIMEOUT_S)  # its session ends: the next round's is the only one
    finally:
        # The echo worker goes first, so the relay's handler of its stream ends by itself: a
        # handler cancelled by the stop would have gRPC print its CancelledError.
        echo.terminate()
        await asyncio.to_thread(echo.wait)
    return measured


def resident_kib(pid: int) -> int:
    """VmRSS of process `pid`, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise BenchError(f"no VmRSS for process {pid}")


async def kib_per_stream(pid: int, open_streams: Callable[[int, int], None],
                         opened: Callable[[int], Awaitable[None]], count: int) -> float:
    """Resident KiB that process `pid` grows by per stream, for `count` streams opened after
    WARM_SESSIONS (`open_streams(first, count)` starts them, `opened(total)` waits for them)."""
    open_streams(0, WARM_SESSIONS)
    await opened(WARM_SESSIONS)
    before = resident_kib(pid)
    open_streams(WARM_SESSIONS, count)
    await opened(WARM_SESSIONS + count)
    return (resident_kib(pid) - before) / count


async def memory(bench: Bench) -> None:
    """memory: resident KiB per live session of `meshdbg serve` against a raw stream's."""
    c = bench.config
    addr = await bench.serve()
    relay_addr = await bench.relay(0, aio=True)
    echo = str(HERE / "bench_core_echo.py")
    async with ControlClient(ConnectionInfo(addr, bench.token)) as client:
        def sessions(first: int, count: int) -> None:
            bench.procs.spawn([sys.executable, str(HERE / "bench_scale_worker.py"), addr, bench.token, str(first),
                               str(count)], bench.env, stdin=subprocess.PIPE)

        def streams(first: int, count: int) -> None:
            bench.procs.spawn([sys.executable, echo, "--aio-workers", relay_addr, str(count)], bench.env)

        ours = await kib_per_stream(bench.pid_of(addr), sessions,
                                    lambda total: wait_stopped(client, total, STOP_TIMEOUT_S), c.memory_sessions)
        floor = await kib_per_stream(bench.pid_of(relay_addr), streams,
                                     lambda total: bench.relayed(relay_addr, total), c.memory_sessions)
    if floor <= 0:
        raise BenchError(f"the raw server did not grow with {c.memory_sessions} more streams")
    bench.report.record("memory", "memory", {"ours_kib": round(ours, 2), "floor_kib": round(floor, 2)}, ours / floor,
                        "a raw grpc.aio stream", sessions=c.memory_sessions)


async def cli_start(bench: Bench) -> None:
    """cli_start: `meshdbg list --json` against `python -c "import grpc"`, fresh processes."""
    addr = await bench.serve()
    env = {k: v for k, v in bench.env.items() if k != "PYTHONDONTWRITEBYTECODE"}  # caches on, as for a user
    env["MESHDBG_ADDR"] = addr

    def run(argv: list[str]) -> Callable[[], Awaitable[None]]:
        async def once() -> None:
            proc = await asyncio.create_subprocess_exec(*argv, env=env, stdout=subprocess.DEVNULL,
                                                        cwd=tempfile.gettempdir())
            if await proc.wait():
                raise BenchError(f"{' '.join(argv)} exited with status {proc.returncode}")
        return once

    measures = {"ours": timed(run([bench.script, "list", "--json"])),
                "floor": timed(run([sys.executable, "-c", "import grpc"]))}
    for measure in measures.values():  # writes the bytecode caches, warms the page cache
        await measure()
    samples = await interleaved(measures, bench.config.start_reps)
    bench.report.ratio("cli_start", "cli_start", samples["ours"], samples["floor"], "python -c 'import grpc'")
