"""Core latency benchmark (issue 2): what one pdb command, a cast and a continue cost.

    python bench/bench_core.py [--quick]

In one run, against a `python -m meshdbg serve --port 0` subprocess (the control client
and the server do not share an event loop, as in real use) and real worker processes that
stop at `breakpoint()` (bench_core_worker.py):

1. floor: a raw grpc.aio bidirectional-stream round trip to an echo server in another
   process (bench_core_echo.py), same loopback, similar message size; and the two-hop
   floor: the same through a raw relay to a synchronous echo worker, the path an attached
   command takes, with none of meshdbg's logic;
2. spawn_to_listed: from spawning the workers until `list()` shows all of them stopped;
3. attach_p_roundtrip: `AttachedSession.send("p x")` on one stopped worker, after a warm-up;
4. cast_all: `cast("all", "p rank")` on every worker;
5. continue_all: `resume("all")` until its reply; the workers loop over `breakpoint()`, so
   several rounds are timed without restarting processes (with `work_s` of idle "work"
   between rounds, so the timed continue is not mixed with the next sessions' setup).

Prints one JSON object per line per metric, then a summary object. Bounded by BUDGET_S;
every process it starts is terminated in a `finally`.
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
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Coroutine, Sequence

from bench_core_echo import RELAY_METHOD, measure_floor

from meshdbg.wire.connection import ConnectionInfo
from meshdbg.debugger.control import ControlClient

HERE = Path(__file__).resolve().parent
BUDGET_S = 100.0  # the whole run, processes included
STARTUP_TIMEOUT_S = 10.0  # one server printing its address
POLL_S = 0.005  # list() polling period while waiting for workers to stop
WATCH_S = 0.2  # how often `ran` looks for a process that should serve until stopped and has exited
FLOOR_PAYLOAD = b"x" * 96  # about a `p x` reply: output, prompt and frame
TARGET_RATIO = 2.0  # attached round trip vs the floor
TARGET_CAST_MS = 15.0
TARGET_CONTINUE_MS = 20.0


@dataclass(frozen=True)
class Config:
    """How much to measure: workers, timed repetitions and warm-up for each metric."""

    workers: int
    warmup: int
    roundtrips: int
    casts: int
    continue_rounds: int
    work_s: float = 0.2  # what a worker does between two breakpoints (see bench_core_worker.py)


FULL = Config(workers=32, warmup=200, roundtrips=2000, casts=50, continue_rounds=10)
QUICK = Config(workers=32, warmup=50, roundtrips=300, casts=10, continue_rounds=3)


def cpu_s(pid: int) -> float:
    """CPU time of every live thread of `pid` so far, in seconds (/proc/PID/task/*/schedstat,
    nanoseconds; 0 once the process is gone). A thread that ended took its time with it."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return 0.0
    return sum(thread_cpu_s(pid, int(task)) for task in tasks)


def thread_cpu_s(pid: int, thread: int) -> float:
    """CPU time of thread `thread` of `pid` so far, in seconds (its schedstat; 0 once it ended)."""
    try:
        with open(f"/proc/{pid}/task/{thread}/schedstat") as stat:
            return int(stat.read().split()[0]) / 1e9
    except FileNotFoundError:
        return 0.0


def process_cpu_s(pid: int) -> float:
    """CPU time of process `pid` so far, ended threads included, in seconds (/proc/PID/stat,
    clock ticks: coarse, for totals over many operations; 0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class BenchError(RuntimeError):
    """The system under test did not behave as the bench expects."""


def ran(bench: str, work: Callable[[Processes], Coroutine[Any, Any, None]], log: IO[bytes], log_path: Path,
        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None) -> bool:
    """Run `work` with processes of its own (ended after it, whatever happened), on the loop
    `loop_factory` makes (asyncio's own by default); False, with why on stderr and the tail of
    the subprocesses' stderr (`log`, at `log_path`), when the system under test misbehaved
    (BenchError)."""
    procs = Processes(log)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(procs.watching(work(procs)))
        return True
    except BenchError as exc:
        log.flush()
        tail = log_path.read_text(errors="replace")[-2000:]
        print(f"{bench}: {exc}\n--- subprocess stderr (tail) ---\n{tail}", file=sys.stderr)
        return False
    finally:
        procs.stop_all()


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _stats(samples: Sequence[float]) -> dict[str, float]:
    """Median and p90 of `samples` (seconds) in ms."""
    p90 = statistics.quantiles(samples, n=10)[-1] if len(samples) > 1 else samples[0]
    return {"value": _ms(statistics.median(samples)), "p90": _ms(p90), "n": len(samples)}


def _emit(record: dict) -> dict:
    """Print `record` as one JSON line as soon as it is measured; return it."""
    print(json.dumps(record), flush=True)
    return record


class Processes:
    """Every subprocess the bench starts, terminated (then killed) by `stop_all`."""

    def __init__(self, log: IO[bytes]) -> None:
        self._log = log
        self._procs: list[subprocess.Popen] = []
        self._serving: list[subprocess.Popen] = []  # each should live until stop_all

    def spawn(self, args: list[str], env: dict[str, str], stdout: int = subprocess.DEVNULL,
              stdin: int | None = None, serves: bool = False) -> subprocess.Popen:
        """Start `args`; `serves`: it should run until stop_all (a server, an echo worker),
        and the bench fails as soon as it exits (see `watching`)."""
        proc = subprocess.Popen(args, env=env, stdin=stdin, stdout=stdout, stderr=self._log, cwd=HERE.parent)
        self._procs.append(proc)
        if serves:
            self._serving.append(proc)
        return proc

    async def watching(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work`, failing it (BenchError) when a serving process exits before it ends: a
        round trip through a process that is gone would otherwise wait for good."""
        task = asyncio.ensure_future(work)
        while not task.done():
            await asyncio.wait({task}, timeout=WATCH_S)
            gone = next((proc for proc in self._serving if proc.poll() is not None), None)
            if gone is not None and not task.done():
                task.cancel()
                raise BenchError(f"{' '.join(gone.args[1:])!r} exited with status {gone.returncode} mid-run")
        task.result()

    async def first_line(self, proc: subprocess.Popen, what: str) -> str:
        """The first stdout line of `proc` (an address or a port), within STARTUP_TIMEOUT_S."""
        try:
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), STARTUP_TIMEOUT_S)
        except asyncio.TimeoutError:
            raise BenchError(f"{what} printed nothing within {STARTUP_TIMEOUT_S:.0f} s") from None
        if not line:
            raise BenchError(f"{what} exited with status {proc.wait()}")
        return line.decode().strip()

    def stop_all(self, grace_s: float = 5.0) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + grace_s
        for proc in self._procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


async def wait_stopped(client: ControlClient, count: int, timeout_s: float,
                       workers: Sequence[subprocess.Popen] = ()) -> None:
    """Poll `list()` until `count` sessions are stopped in pdb; BenchError at the deadline, or
    at once when one of `workers` has exited (it will never stop)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if sum(s.state == "stopped" for s in await client.list()) >= count:
            return
        gone = next((worker for worker in workers if worker.poll() is not None), None)
        if gone is not None:
            raise BenchError(f"a worker (pid {gone.pid}) exited with status {gone.returncode} before it stopped")
        await asyncio.sleep(POLL_S)
    raise BenchError(f"fewer than {count} workers stopped within {timeout_s:.0f} s")


async def bench_floor(procs: Processes, env: dict[str, str], config: Config) -> dict:
    echo = procs.spawn([sys.executable, str(HERE / "bench_core_echo.py")], env, stdout=subprocess.PIPE, serves=True)
    port = await procs.first_line(echo, "the echo server")
    samples = await measure_floor(f"127.0.0.1:{port}", FLOOR_PAYLOAD, config.warmup, config.roundtrips)
    return {"name": "floor_aio_bidi_roundtrip", "unit": "ms", **_stats(samples)}


async def bench_relay_floor(procs: Processes, env: dict[str, str], config: Config) -> dict:
    relay = procs.spawn([sys.executable, str(HERE / "bench_core_echo.py"), "--relay"], env, stdout=subprocess.PIPE,
                        serves=True)
    addr = f"127.0.0.1:{await procs.first_line(relay, 'the relay')}"
    procs.spawn([sys.executable, str(HERE / "bench_core_echo.py"), "--worker", addr], env, serves=True)
    samples = await measure_floor(addr, FLOOR_PAYLOAD, config.warmup, config.roundtrips, RELAY_METHOD)
    return {"name": "floor_two_hop_relay", "unit": "ms", **_stats(samples)}


def worker_env(env: dict[str, str], rank: int) -> dict[str, str]:
    """`env` for a real worker (bench_core_worker.py) of rank `rank`: its breakpoints open
    meshdbg sessions, as rank `rank` of a mesh of eight GPUs a host."""
    return {**env, "MESHDBG_RANK": str(rank), "MESHDBG_COORDS": f"hosts={rank // 8},gpus={rank % 8}",
            "MESHDBG_NAME": "bench", "PYTHONBREAKPOINT": "meshdbg.worker.remote_breakpointhook"}


def spawn_workers(procs: Processes, env: dict[str, str], config: Config) -> None:
    script = str(HERE / "bench_core_worker.py")
    for rank in range(config.workers):
        procs.spawn([sys.executable, script, str(config.continue_rounds), str(config.work_s)], worker_env(env, rank))


async def attach_p_samples(client: ControlClient, warmup: int, roundtrips: int) -> list[float]:
    """Seconds of each of `roundtrips` `p x` round trips through a session attached to rank 0
    (a bench_core_worker), after `warmup` untimed ones."""
    samples = []
    async with client.attach(rank=0) as pdb:
        for index in range(warmup + roundtrips):
            start = time.perf_counter()
            reply = await pdb.send("p x")
            elapsed = time.perf_counter() - start
            if "'rank': 0" not in reply.output:
                raise BenchError(f"unexpected reply to `p x`: {reply.output!r}")
            if index >= warmup:
                samples.append(elapsed)
    return samples


async def bench_attach(client: ControlClient, config: Config, floor_ms: float, relay_ms: float) -> dict:
    samples = await attach_p_samples(client, config.warmup, config.roundtrips)
    record = {"name": "attach_p_roundtrip", "unit": "ms", **_stats(samples)}
    return {**record, "floor": floor_ms, "ratio": round(record["value"] / floor_ms, 2),
            "target": round(TARGET_RATIO * floor_ms, 3), "two_hop_floor": relay_ms,
            "ratio_to_two_hop_floor": round(record["value"] / relay_ms, 2)}


async def bench_cast(client: ControlClient, config: Config) -> dict:
    samples = []
    for _ in range(config.casts):
        start = time.perf_counter()
        results = await client.cast("all", "p rank")
        samples.append(time.perf_counter() - start)
        if len(results) != config.workers or not all(r.ok for r in results):
            raise BenchError(f"cast reached {sum(r.ok for r in results)} of {config.workers} workers")
    return {"name": "cast_all", "unit": "ms", "workers": config.workers, **_stats(samples), "target": TARGET_CAST_MS}


async def bench_continue(client: ControlClient, config: Config, timeout_s: float) -> dict:
    """Time `resume("all")` once per round; between rounds wait for every worker to stop again."""
    samples = []
    for round_index in range(config.continue_rounds):
        if round_index:
            await wait_stopped(client, config.workers, timeout_s)
        start = time.perf_counter()
        resumed = await client.resume("all")
        samples.append(time.perf_counter() - start)
        if len(resumed) != config.workers:
            raise BenchError(f"continue resumed {len(resumed)} of {config.workers} workers")
    return {"name": "continue_all", "unit": "ms", "workers": config.workers, **_stats(samples),
            "work_s": config.work_s, "target": TARGET_CONTINUE_MS}


async def run(config: Config, procs: Processes, tmp: Path) -> list[dict]:
    token = secrets.token_urlsafe(32)
    env = {**os.environ, "MESHDBG_TOKEN": token, "MESHDBG_CONNECTION_FILE": str(tmp / "connection.json")}
    floor = _emit(await bench_floor(procs, env, config))
    relay = _emit(await bench_relay_floor(procs, env, config))
    server = procs.spawn([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env, stdout=subprocess.PIPE,
                         serves=True)
    addr = await procs.first_line(server, "meshdbg serve")
    client = ControlClient(ConnectionInfo(addr, token))
    try:
        start = time.perf_counter()
        spawn_workers(procs, {**env, "MESHDBG_ADDR": addr}, config)
        await wait_stopped(client, config.workers, BUDGET_S / 2)
        listed = _emit({"name": "spawn_to_listed", "unit": "ms", "value": _ms(time.perf_counter() - start),
                        "workers": config.workers, "target": None})
        attach = _emit(await bench_attach(client, config, floor["value"], relay["value"]))
        cast = _emit(await bench_cast(client, config))
        resume = _emit(await bench_continue(client, config, STARTUP_TIMEOUT_S))
    finally:
        await client.close()
    return [floor, relay, listed, attach, cast, resume]


def summary(records: list[dict]) -> dict:
    by_name = {r["name"]: r for r in records}
    met = {
        "attach_p_roundtrip": by_name["attach_p_roundtrip"]["ratio"] <= TARGET_RATIO,
        "cast_all": by_name["cast_all"]["value"] <= TARGET_CAST_MS,
        "continue_all": by_name["continue_all"]["value"] <= TARGET_CONTINUE_MS,
    }
    return {"name": "summary", "workers": by_name["cast_all"]["workers"],
            **{f"{r['name']}_ms": r["value"] for r in records},
            "attach_ratio_to_floor": by_name["attach_p_roundtrip"]["ratio"],
            "attach_ratio_to_two_hop_floor": by_name["attach_p_roundtrip"]["ratio_to_two_hop_floor"], "targets_met": met,
            "all_targets_met": all(met.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    config = QUICK if parser.parse_args().quick else FULL
    with tempfile.TemporaryDirectory(prefix="meshdbg-bench-") as tmp, open(Path(tmp) / "stderr.log", "wb") as log:
        procs = Processes(log)
        try:
            records = asyncio.run(asyncio.wait_for(run(config, procs, Path(tmp)), BUDGET_S))
        except (BenchError, asyncio.TimeoutError) as exc:
            log.flush()
            tail = (Path(tmp) / "stderr.log").read_text(errors="replace")[-2000:]
            print(f"bench_core: {exc or 'over the time budget'}\n--- subprocess stderr (tail) ---\n{tail}",
                  file=sys.stderr)
            return 1
        finally:
            procs.stop_all()
    _emit(summary(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
