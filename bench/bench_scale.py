"""10,000 sessions stopped at once: all listed, `list` through the API, server memory and GC.

    python bench/bench_scale.py [--sessions 10000] [--processes 10] [--rounds 20]
    python bench/bench_scale.py --real 50x200        (real processes x threads, see below)

A private `meshdbg serve` (loopback) runs with a GC probe (gc.callbacks timing every
collection); --processes simulated workers (bench_scale_worker.py) open --sessions sessions
between them, 200 streams per connection, all at once. Measured: seconds until every session
is listed as stopped; `ControlClient.list()` latency over --rounds calls with every session
live, against the floor of the same call with one session (measured in the same run); the
server's RSS; its longest GC pause while the sessions were live (gc_pause_ms), and after they
all ended (gc_pause_after_ms: the idle full collection meshdbg.debugger.gc_pauses allows).
Prints one JSON line per measure and a summary line with the targets of issue 12 (list ≤ 100
ms, RSS ≤ 500 MB, GC pause ≤ 100 ms).

`--real PxT` measures the real thing instead: P worker processes (tests/scripts/burst.py) of T
threads each reach `breakpoint()` at the same moment. Measured: seconds until all P*T are listed
stopped (listed_s), the server's RSS then, how many breakpoints were skipped (a worker's
"continuing" on stderr), how many workers crashed (killed by a signal), failed or hung (not
finished 120 s after `continue all` has resumed every stop it could).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from meshdbg.debugger.control import ControlClient
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.errors import NoMatchError

HERE = Path(__file__).resolve().parent
TARGETS = {"list_ms": 100.0, "rss_mb": 500.0, "gc_pause_ms": 100.0}

# The real `meshdbg serve`, with every GC pause over 1 ms timed; printed (wall time, ms) at exit.
SERVER = """
import atexit, gc, json, sys, time
pauses, started = [], [0.0]
def probe(phase, info):
    if phase == "start":
        started[0] = time.perf_counter()
    elif time.perf_counter() - started[0] > 0.001:
        pauses.append((time.time(), (time.perf_counter() - started[0]) * 1000))
gc.callbacks.insert(0, probe)
atexit.register(lambda: print(json.dumps({"gc_pauses": pauses}), file=sys.stderr, flush=True))
from meshdbg.debugger.cli import main
sys.exit(main(["serve", "--port", "0"]))
"""


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


async def list_latencies(client: ControlClient, rounds: int) -> tuple[list[float], int]:
    samples, count = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        count = len(await client.list())
        samples.append((time.perf_counter() - start) * 1000)
    return samples, count


async def wait_listed(client: ControlClient, count: int, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        sessions = await client.list()
        if sum(1 for s in sessions if s.state == "stopped") >= count:
            return time.monotonic() - start
        await asyncio.sleep(0.2)
    raise SystemExit(f"only {len(sessions)} of {count} sessions listed after {timeout:.0f} s")


def start_workers(env: dict[str, str], addr: str, first: int, count: int, processes: int) -> list[subprocess.Popen]:
    share = count // processes
    workers = []
    for index in range(processes):
        size = share + (count % processes if index == processes - 1 else 0)
        workers.append(subprocess.Popen([sys.executable, str(HERE / "bench_scale_worker.py"), addr, env["MESHDBG_TOKEN"],
                                         str(first + index * share), str(size)],
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    for worker in workers:
        worker.stdout.readline()
    return workers


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.stdin.close()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


BURST = HERE.parent / "tests" / "scripts" / "burst.py"


def real_burst(shape: str) -> None:
    """`--real PxT`: P real processes of T threads stopping at once; one JSON line of figures."""
    processes, threads = (int(n) for n in shape.lower().split("x"))
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(Path(folder) / "conn.json"), MESHDBG_TOKEN="bench",
                   PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
        env.pop("MESHDBG_ADDR", None)
        server = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        addr = server.stdout.readline().strip()
        logs = [Path(folder) / f"rank{rank}.err" for rank in range(processes)]
        results: dict[str, object] = {"shape": shape}

        async def measure() -> None:
            async with ControlClient(ConnectionInfo(addr, "bench")) as client:
                workers = [subprocess.Popen([sys.executable, str(BURST), str(threads)], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=log.open("w"),
                                            env=dict(env, MESHDBG_RANK=str(rank)))
                           for rank, log in enumerate(logs)]
                try:
                    results["listed"], results["listed_s"] = await listed_until_still(client, processes * threads)
                    results["rss_mb"] = round(rss_mb(server.pid), 1)
                    results["resumed"] = await resume_until_done(client, workers)
                finally:
                    codes = [await asyncio.to_thread(_wait_or_kill, worker) for worker in workers]
            results["crashed"] = sum(1 for code in codes if code is not None and code < 0)
            results["failed"] = sum(1 for code in codes if code is not None and code > 0)
            results["hung"] = codes.count(None)
            said = [log.read_text().splitlines() for log in logs]
            results["skipped"] = sum(line.endswith("continuing") for lines in said for line in lines)
            # what the workers said before "continuing" (once per process and problem)
            results["skip_reasons"] = dict(collections.Counter(
                lines[i - 1] for lines in said for i, line in enumerate(lines) if i and line.endswith("continuing")
            ).most_common(5))

        try:
            asyncio.run(measure())
        finally:
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=30)
    print(json.dumps({"measure": "real_burst", **results}))


async def listed_until_still(client: ControlClient, count: int, still_s: float = 60) -> tuple[int, float]:
    """How many sessions are listed stopped once all `count` are, or once none more came for
    `still_s`; and the seconds until the last of them came."""
    start = last_change = time.monotonic()
    listed = 0
    while listed < count and time.monotonic() - last_change < still_s:
        stopped = sum(1 for s in await client.list() if s.state == "stopped")
        if stopped != listed:
            listed, last_change = stopped, time.monotonic()
        await asyncio.sleep(0.2)
    return listed, round(last_change - start, 2)


async def resume_until_done(client: ControlClient, workers: list[subprocess.Popen], limit_s: float = 300) -> int:
    """`continue all` until every worker process has finished (a stop that re-registers late,
    its stream cut by a starved machine, is resumed by a later round); how many were resumed."""
    resumed, start = 0, time.monotonic()
    while any(worker.poll() is None for worker in workers) and time.monotonic() - start < limit_s:
        try:
            resumed += len(await client.resume("all", timeout_s=60))
        except NoMatchError:
            pass  # none stopped right now
        await asyncio.sleep(1)
    return resumed


def _wait_or_kill(worker: subprocess.Popen) -> int | None:
    """Its exit status; None when it had not finished 120 s later (then it is killed)."""
    try:
        return worker.wait(timeout=120)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--real", metavar="PxT", help="real processes x threads instead (e.g. 50x200)")
    args = parser.parse_args()
    if args.real:
        real_burst(args.real)
        return
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(Path(folder) / "conn.json"), MESHDBG_TOKEN="bench")
        env.pop("MESHDBG_ADDR", None)
        server = subprocess.Popen([sys.executable, "-c", SERVER], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        addr = server.stdout.readline().strip()
        results: dict[str, object] = {}
        window = [0.0, 0.0]  # while the sessions were live: the burst, then the listings

        async def measure() -> None:
            async with ControlClient(ConnectionInfo(addr, "bench")) as client:
                floor_workers = start_workers(env, addr, 0, 1, 1)
                await wait_listed(client, 1, 30)
                floor, _ = await list_latencies(client, args.rounds)
                stop_workers(floor_workers)
                window[0] = time.time()
                workers = start_workers(env, addr, 0, args.sessions, args.processes)
                try:
                    results["listed_s"] = round(await wait_listed(client, args.sessions, 300), 2)
                    samples, count = await list_latencies(client, args.rounds)
                    results["rss_mb"] = round(rss_mb(server.pid), 1)
                finally:
                    window[1] = time.time()
                    stop_workers(workers)
            results["listed"] = count
            results["list_ms"] = round(statistics.median(samples), 2)
            results["list_max_ms"] = round(max(samples), 2)
            results["floor_list_ms"] = round(statistics.median(floor), 2)

        try:
            asyncio.run(measure())
        finally:
            server.send_signal(signal.SIGINT)
            _, errors = server.communicate(timeout=30)
        pauses = json.loads(next(line for line in errors.splitlines() if line.startswith('{"gc_pauses"')))["gc_pauses"]
        results["gc_pause_ms"] = round(max([ms for at, ms in pauses if window[0] <= at <= window[1]], default=0), 2)
        results["gc_pause_after_ms"] = round(max([ms for at, ms in pauses if at > window[1]], default=0), 2)
    for name, value in results.items():
        print(json.dumps({"measure": name, "value": value, "sessions": args.sessions}))
    verdict = {name: results[name] <= limit for name, limit in TARGETS.items()}
    print(json.dumps({"summary": "scale", "sessions": args.sessions, "all_listed": results["listed"] == args.sessions,
                      **{f"{name}_ok": ok for name, ok in verdict.items()}}))


if __name__ == "__main__":
    main()
