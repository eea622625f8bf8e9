"""Launcher benchmark (issue 4): from `meshdbg run` to every rank ready, and actor round trips.

    python bench/bench_launcher.py [--quick]

In one run, on this machine:

1. floor_python_spawn: wall time of `python -c pass` (the cheapest process start);
2. floor_grpc_roundtrip: a raw grpc.aio stream round trip to an echo server in another
   process (bench_core_echo.py), the floor of any actor call;
3. run_ready_N (N = 8, 32): from starting `python -m meshdbg run --mesh procs=N` on an empty
   script until it reports every rank registered (its "N ranks ready" line), and run_exit_N
   until the process has exited (every rank finished, output drained, server stopped);
4. actor_call_one / actor_call_all: `ProcMesh` with 32 ranks, `ping.call_one(rank=...)` and
   `ping.call()` on all 32, after a warm-up.

Prints one JSON object per line per metric (milliseconds), then a summary object.
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
from typing import Callable, Sequence

from bench_core_echo import measure_floor
from bench_launcher_actor import Ping

from meshdbg.debugger.mesh import proc_mesh

HERE = Path(__file__).resolve().parent


def _stats(samples: Sequence[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {"median_ms": round(statistics.median(ms), 3), "min_ms": round(ms[0], 3),
            "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 3), "samples": len(ms)}


def _emit(record: dict) -> dict:
    print(json.dumps(record), flush=True)
    return record


def floor_spawn(count: int) -> dict:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append(time.perf_counter() - start)
    return _emit({"metric": "floor_python_spawn", **_stats(samples)})


def floor_grpc(count: int) -> dict:
    echo = subprocess.Popen([sys.executable, str(HERE / "bench_core_echo.py")], stdout=subprocess.PIPE, text=True)
    try:
        port = echo.stdout.readline().strip()
        samples = asyncio.run(measure_floor(f"127.0.0.1:{port}", b"x" * 64, 50, count))
    finally:
        echo.terminate()
        echo.wait(10)
    return _emit({"metric": "floor_grpc_roundtrip", **_stats(samples)})


def run_ready(size: int, repeats: int, script: Path, env: dict[str, str]) -> list[dict]:
    ready, total = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", f"procs={size}", str(script)],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
        line = run.stderr.readline()
        ready.append(time.perf_counter() - start)
        run.stderr.read()
        if run.wait(60) != 0 or " ready in " not in line:
            raise RuntimeError(f"meshdbg run failed: {line}")
        total.append(time.perf_counter() - start)
    return [_emit({"metric": f"run_ready_{size}", "ranks": size, **_stats(ready)}),
            _emit({"metric": f"run_exit_{size}", "ranks": size, **_stats(total)})]


def timed(call: Callable[[], object], warmup: int, count: int) -> list[float]:
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def actor_calls(size: int, count: int) -> list[dict]:
    with proc_mesh(procs=size) as mesh:
        pings = mesh.spawn("ping", Ping)
        one = timed(lambda: pings.ping.call_one(1, rank=size - 1), 20, count)
        every = timed(lambda: pings.ping.call(1), 5, count)
    return [_emit({"metric": "actor_call_one", "ranks": size, **_stats(one)}),
            _emit({"metric": "actor_call_all", "ranks": size, **_stats(every)})]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeats, calls = (2, 50) if args.quick else (5, 300)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "empty.py"
        script.write_text("")
        env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(Path(tmp) / "connection.json"))
        records = [floor_spawn(repeats * 2), floor_grpc(calls)]
        for size in (8, 32):
            records += run_ready(size, repeats, script, env)
        records += actor_calls(32, calls)
    summary = {r["metric"]: r["median_ms"] for r in records}
    _emit({"summary": summary, "target_run_ready_32_ms": 2000, "met": summary["run_ready_32"] <= 2000})
    return 0


if __name__ == "__main__":
    sys.exit(main())
