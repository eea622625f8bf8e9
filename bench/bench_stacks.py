"""`stacks` at scale: latency on 64 real ranks and on 1,024 simulated ones, and what a sample
costs a running rank.

    python bench/bench_stacks.py [--ranks 64] [--simulated 1024] [--rounds 20]

Real: `meshdbg run --mesh gpus=N bench/bench_stacks_worker.py` (every rank waits in a few
nested calls with one extra thread; rank 0 spins in Python, busy). Each round times one
`stacks` call through the control API, and the floor measured beside it: `list --all`, one
round trip that reaches no rank. The cost to a rank is the CPU time (every thread's, from
/proc/PID/task/*/schedstat) the ranks used during the sampled rounds, minus what they used over as many
idle rounds of the same length (the floor), per rank per sample; the busy rank is left out
(it uses a whole core either way). Simulated: one process opens N agent streams (asyncio gRPC)
that answer each SampleRequest with a 20-frame stack, so the server's fan-out, gathering and
the client's grouping are measured without N interpreters. One JSON line per measure, then
a summary line against the targets (2 s for 64 ranks, 5 ms of CPU per sample).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from bench_core import cpu_s

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient
from meshdbg.debugger.stack_tree import stack_groups, stack_tree
from meshdbg.wire.connection import PROTOCOL_VERSION, ConnectionInfo
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.wire.proto import mesh_pb2_grpc as mesh_grpc
from meshdbg.wire.vocabulary import StackSource, State

HERE = Path(__file__).resolve().parent
LATENCY_TARGET_S = 2.0
CPU_TARGET_MS = 5.0


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"median_s": round(statistics.median(ordered), 4), "max_s": round(ordered[-1], 4),
            "p90_s": round(ordered[int(0.9 * (len(ordered) - 1))], 4)}


async def timed(call) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def real_mesh(ranks: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(Path(folder) / "conn.json"), MESHDBG_TOKEN="bench")
        env.pop("MESHDBG_ADDR", None)
        run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", f"gpus={ranks}",
                                str(HERE / "bench_stacks_worker.py")], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            connection = await _connection(Path(folder) / "conn.json", run)
            async with ControlClient(connection) as client:
                workers = await _wait_ranks(client, ranks)
                pids = [w.pid for w in workers if w.rank != 0]
                await _wait_in_place(client, ranks)
                sampled, floor, idle_cpu, busy_cpu, outside = [], [], 0.0, 0.0, 0
                for _ in range(rounds):
                    views: list = []

                    async def sample() -> None:
                        views[:] = await client.stacks("", all_threads=True)

                    before = sum(cpu_s(pid) for pid in pids)
                    latency = await timed(sample)
                    busy_cpu += sum(cpu_s(pid) for pid in pids) - before
                    sampled.append(latency)
                    outside += sum(1 for v in views if v.source is not StackSource.AGENT)
                    floor.append(await timed(client.workers))
                    before = sum(cpu_s(pid) for pid in pids)
                    await asyncio.sleep(latency)  # an idle window as long as the sampled one
                    idle_cpu += sum(cpu_s(pid) for pid in pids) - before
                cost_ms = max(0.0, busy_cpu - idle_cpu) / (rounds * len(pids)) * 1000
                return {"sampled": sampled, "floor": floor, "cost_ms": cost_ms, "pids": len(pids), "outside": outside}
        finally:
            run.terminate()
            run.wait(timeout=20)


async def _connection(path: Path, run: subprocess.Popen) -> ConnectionInfo:
    deadline = time.monotonic() + 60
    while not path.exists():
        if run.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("meshdbg run did not start")
        await asyncio.sleep(0.05)
    data = json.loads(path.read_text())
    return ConnectionInfo(data["addr"], data["token"])


async def _wait_ranks(client: ControlClient, ranks: int):
    deadline = time.monotonic() + 120
    while True:
        workers = await client.workers()
        if len(workers) == ranks and all(w.state is State.RUNNING for w in workers):
            return workers
        if time.monotonic() > deadline:
            raise SystemExit(f"only {len(workers)} of {ranks} ranks came up")
        await asyncio.sleep(0.2)


async def _wait_in_place(client: ControlClient, ranks: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        views = await client.stacks()
        if sum(1 for v in views for t in v.threads if any(f[1] == "wait_here" for f in t.frames)) == ranks - 1:
            return
        if time.monotonic() > deadline:
            raise SystemExit("the ranks never reached their waits")
        await asyncio.sleep(0.2)


# ---- simulated ranks ----------------------------------------------------------------------

FRAMES = [pb.Frame(filename=f"/job/layer{i}.py", function=f"forward_{i}", lineno=10 + i) for i in range(20)]


async def simulated_agent(channel: grpc.aio.Channel, token: str, rank: int, ready: asyncio.Event, count: list[int],
                          total: int) -> None:
    outgoing: asyncio.Queue = asyncio.Queue()
    identity = pb.Identity(name="sim", rank=rank, hostname="simulated-host", pid=1_000_000 + rank,
                           protocol_version=PROTOCOL_VERSION, coords=[pb.Coord(dim="gpus", index=rank)])
    await outgoing.put(mesh_pb.AgentMessage(hello=mesh_pb.AgentHello(identity=identity, launcher="sim")))

    async def requests():
        while True:
            yield await outgoing.get()

    call = mesh_grpc.MeshStub(channel).Agent(requests(), metadata=(("authorization", f"Bearer {token}"),))
    leaf = pb.Frame(filename="/job/comm.py", function="all_reduce" if rank % 32 else "load_batch", lineno=7)
    thread = pb.ThreadStack(thread_id=rank, thread_name="MainThread", main=True, frames=[*FRAMES, leaf])
    async for command in call:
        if command.HasField("welcome"):
            count[0] += 1
            if count[0] == total:
                ready.set()
        elif command.WhichOneof("kind") == "sample":
            await outgoing.put(mesh_pb.AgentMessage(stacks=pb.SampledStacks(
                request_id=command.sample.request_id, threads=[thread])))


async def simulated(ranks: int, rounds: int) -> dict:
    server = DebugClient(publish=False)
    connection = await server.start()
    channels = [grpc.aio.insecure_channel(connection.addr) for _ in range(max(1, ranks // 64))]
    ready, count = asyncio.Event(), [0]
    agents = [asyncio.create_task(simulated_agent(channels[r % len(channels)], connection.token, r, ready, count, ranks))
              for r in range(ranks)]
    try:
        try:
            await asyncio.wait_for(ready.wait(), 60)
        except asyncio.TimeoutError:
            raise SystemExit(f"only {count[0]} of {ranks} simulated agents were welcomed within 60 s") from None
        async with ControlClient(connection) as client:
            sampled, floor, render = [], [], []
            for _ in range(rounds):
                views: list = []

                async def sample() -> None:
                    views[:] = await client.stacks()

                sampled.append(await timed(sample))
                start = time.perf_counter()
                stack_tree(views), stack_groups(views)
                render.append(time.perf_counter() - start)
                floor.append(await timed(client.workers))
        return {"sampled": sampled, "floor": floor, "render": render}
    finally:
        for channel in channels:
            await channel.close()  # ends every agent stream from the client's side
        await asyncio.gather(*agents, return_exceptions=True)
        await server.stop(1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--simulated", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    real = await real_mesh(args.ranks, args.rounds)
    emit({"measure": "stacks_real", "ranks": args.ranks, "threads": "all", **summary(real["sampled"]),
          "rounds_s": [round(x, 3) for x in real["sampled"]], "not_from_agent": real["outside"]})
    emit({"measure": "floor_list_all_real", "ranks": args.ranks, **summary(real["floor"])})
    emit({"measure": "cpu_per_sample_per_rank", "ranks_measured": real["pids"], "ms": round(real["cost_ms"], 3)})
    sim = await simulated(args.simulated, args.rounds)
    emit({"measure": "stacks_simulated", "ranks": args.simulated, **summary(sim["sampled"])})
    emit({"measure": "floor_list_all_simulated", "ranks": args.simulated, **summary(sim["floor"])})
    emit({"measure": "render_tree_and_json_simulated", "ranks": args.simulated, **summary(sim["render"])})
    worst = max(real["sampled"])
    emit({"summary": True, "real_max_s": round(worst, 3), "latency_target_s": LATENCY_TARGET_S,
          "latency_ok": worst < LATENCY_TARGET_S, "cpu_ms": round(real["cost_ms"], 3), "cpu_target_ms": CPU_TARGET_MS,
          "cpu_ok": real["cost_ms"] < CPU_TARGET_MS})


if __name__ == "__main__":
    asyncio.run(main())
