"""A worker's `p x` at two revisions side by side, in one run: which one is faster, and by how much.

    python bench/bench_worker_ab.py [--base REV] [--blocks N] [--count N] [--warmup N]

bench_floor.py's run_p moves by 0.2 from one run to the next with where the scheduler puts
each process's threads on 2 cores: more than most changes to a worker are worth, so a before
and an after run side by side say little. Here the two share one run: one server in this
process (a `DebugClient` and its client `ControlClient.beside`, as `meshdbg run`), two real
workers (bench_core_worker.py) stopped at their breakpoint, one running the worker code of git
revision REV (default HEAD, checked out in a temporary worktree), the other the working
tree's; blocks of `p x` to each in turn, the order swapped every pair of blocks; then the same
with the two ranks swapped (the rank attached first runs its blocks a few microseconds
faster). Prints one JSON line: each side's median round trip and its worker's main-thread CPU
per `p x` (`/proc/PID/task/PID/schedstat`), and the median of the paired differences, tree
minus base. About 30 s. The server's side runs the working tree's code for both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_core import Processes, ran, thread_cpu_s, wait_stopped, worker_env

from meshdbg.debugger.cli import loop_factory
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient

HERE = Path(__file__).resolve().parent
STOP_TIMEOUT_S = 30.0
SIDES = ("base", "tree")


def checkout(revision: str, into: Path) -> Path:
    """A directory to put on PYTHONPATH for `import meshdbg` to load `revision`'s code."""
    subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach", "-q", str(into / "tree"), revision],
                   check=True)
    (into / "path").mkdir()
    (into / "path" / "meshdbg").symlink_to(into / "tree")
    return into / "path"


async def phase(procs: Processes, base_path: Path, base_rank: int, blocks: int, count: int, warmup: int
                ) -> dict[str, list[tuple[float, float]]]:
    """One phase: the base worker at `base_rank`, the tree's at the other; each side's (median
    round trip, worker CPU per `p x`), in microseconds, block by block."""
    server = DebugClient(token=secrets.token_hex(16), publish=False, what="bench_worker_ab")
    await server.start()
    try:
        async with ControlClient.beside(server) as client:
            workers = {}
            for side in SIDES:
                rank = base_rank if side == "base" else 1 - base_rank
                env = worker_env({**os.environ, "MESHDBG_TOKEN": server.connection.token,
                                  "MESHDBG_ADDR": server.connection.addr}, rank)
                if side == "base":
                    env["PYTHONPATH"] = str(base_path)
                workers[side] = (rank, procs.spawn([sys.executable, str(HERE / "bench_core_worker.py"), "1", "0"], env))
            await wait_stopped(client, 2, STOP_TIMEOUT_S, [proc for _, proc in workers.values()])
            async with client.attach(rank=0) as first, client.attach(rank=1) as second:
                attached = {side: (first if rank == 0 else second) for side, (rank, _) in workers.items()}
                for session in attached.values():
                    for _ in range(warmup):
                        await session.send("p x")
                measured: dict[str, list[tuple[float, float]]] = {side: [] for side in SIDES}
                for block in range(blocks):
                    for side in (SIDES if block % 2 else SIDES[::-1]):
                        session, pid = attached[side], workers[side][1].pid
                        cpu_before, samples = thread_cpu_s(pid, pid), []
                        for _ in range(count):
                            began = time.perf_counter_ns()
                            await session.send("p x")
                            samples.append(time.perf_counter_ns() - began)
                        measured[side].append((statistics.median(samples) / 1e3,
                                               (thread_cpu_s(pid, pid) - cpu_before) / count * 1e6))
            await client.resume("all", timeout_s=STOP_TIMEOUT_S)
        for _, proc in workers.values():
            await asyncio.to_thread(proc.wait, STOP_TIMEOUT_S)
        return measured
    finally:
        await server.stop(0)


async def compare(procs: Processes, base_path: Path, revision: str, blocks: int, count: int, warmup: int) -> None:
    """Both phases, then the one JSON line."""
    pairs: list[tuple[float, float]] = []
    sides: dict[str, list[tuple[float, float]]] = {side: [] for side in SIDES}
    for base_rank in (0, 1):
        measured = await phase(procs, base_path, base_rank, blocks, count, warmup)
        for side in SIDES:
            sides[side] += measured[side]
        pairs += [(tree[0] - base[0], tree[1] - base[1]) for base, tree in zip(measured["base"], measured["tree"])]
    print(json.dumps({
        "bench": "worker_ab", "base_revision": revision, "blocks": 2 * blocks, "count": count,
        **{side: {"round_trip_us": round(statistics.median(r for r, _ in rows), 1),
                  "worker_cpu_us": round(statistics.median(c for _, c in rows), 1)} for side, rows in sides.items()},
        "tree_minus_base": {"round_trip_us": round(statistics.median(r for r, _ in pairs), 1),
                            "worker_cpu_us": round(statistics.median(c for _, c in pairs), 1)},
        "load_average": os.getloadavg()}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="the git revision to compare the working tree with")
    parser.add_argument("--blocks", type=int, default=12, help="blocks of each side per phase (two phases)")
    parser.add_argument("--count", type=int, default=300, help="`p x` per block")
    parser.add_argument("--warmup", type=int, default=300, help="`p x` to each worker before the first block")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshdbg-worker-ab-") as tmp, open(Path(tmp) / "log", "wb") as log:
        base_path = checkout(args.base, Path(tmp))
        try:
            return 0 if ran("bench_worker_ab", lambda procs: compare(procs, base_path, args.base, args.blocks, args.count,
                                                                 args.warmup),
                            log, Path(tmp) / "log", loop_factory("run")) else 1
        finally:
            subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(Path(tmp) / "tree")],
                           check=False)


if __name__ == "__main__":
    sys.exit(main())
