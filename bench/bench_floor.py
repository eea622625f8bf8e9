"""Every path of issue 22 against its raw-gRPC floor, in one run, interleaved: ratios.

    python bench/bench_floor.py [--big] [--strict] [--quick] [--only PATH,...] [--same-grpc]

Each path is timed alternately with its floor (a block of meshdbg, a block of the floor, the
order swapped every repetition), so whatever load the machine has hits both; the figure is
the ratio of the medians. Floors are raw gRPC with the same shapes and none of meshdbg's logic
(generic handlers and bytes, bench_core_echo.py). This process loads gRPC as the `meshdbg`
command does (meshdbg.debugger.grpc_engine), on whose pollers `meshdbg serve` runs; the floors'
servers run on gRPC's defaults unless --same-grpc:

| path | meshdbg | floor | target |
|---|---|---|---|
| attach_p_api | `AttachedSession.send("p x")`, a real worker | two-hop echo: client → relay → sync worker | 1.1 |
| attach_p_plain | `p x` through `meshdbg attach --plain` | attach_p_api (also shown against the two-hop echo) | 1.2 |
| run_p | `p x` from a client in the server's own process and loop, as `meshdbg run`'s console (the median of 5 rounds, each with fresh workers) | one hop: that process's grpc.aio server writing to a sync echo worker | 1.3 |
| cast_N, continue_N | `cast("all", "p rank")`, `resume("all")` on N real workers | a relay fanning each message out to N sync echo workers and streaming N answers back | 1.2 |
| cast_1024, continue_1024 (--big) | the same on 1,024 simulated sessions (bench_scale_worker.py --answer) | fan-out to 1,024 grpc.aio echo streams | 1.5 |
| list_api | `ControlClient.list()` of 10,000 sessions | the same bytes over a raw unary call, parsed (`ListReply.FromString`) | 1.2 |
| list_cli | `meshdbg list --json`, a fresh process | bench_floor_cli.py: a fresh process, the same bytes, the same JSON out | 1.2 |
| memory | `meshdbg serve`'s resident KiB per live stopped session (2,000 after 200) | a grpc.aio relay's per worker stream, opened as a session's (hello in, welcome out, prompt in, both kept) | 1.1 |
| cli_start | `meshdbg list --json`, a fresh process, no session | `python -c "import grpc"` | 1.3 |
| schedule | `meshdbg schedule` p=64 v=4 m=1024, its table to /dev/null | building as many actions (bench_schedule.floor) | 1.5 |

Prints one JSON line per path ({"path", "ours_ms", "floor_ms", "ratio", "target", ...}), a
`FAIL <path> ratio X > target Y` line for each ratio past its target, and a summary line. The
exit status is 0 unless --strict and a ratio failed (a loaded machine moves ratios too), or
the system under test misbehaved (1). About 1–2 minutes on 2 cores; --big adds the 1,024-session
paths (about a minute more). Every process it starts is ended in a `finally`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Coroutine

from meshdbg.debugger import grpc_engine

grpc_engine.load_grpc()  # before anything loads gRPC: this process hosts run_p's server, as `meshdbg run` does

import grpc  # noqa: E402

from bench_core import BenchError, Processes, process_cpu_s, ran, wait_stopped, worker_env
from bench_core_echo import RELAY_METHOD, round_trip
from bench_floor_measure import ME, STOP_TIMEOUT_S, CpuMeter, Measure, Report, blocks, interleaved, p_x, timed
from bench_floor_process import cli_start, inside_run, memory
from bench_schedule import floor as build_actions

from meshdbg.debugger.cli import loop_factory
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.proto import debugger_pb2 as pb

HERE = Path(__file__).resolve().parent
PAYLOAD = b"x" * 96  # about a `p x` reply: output, prompt and frame
LIST_METHOD = "/meshdbg.v1.Debugger/List"


class PlainTerminal:
    """What types `p x` into `meshdbg attach --plain` and reads its replies: blocking writes
    and reads of its pipes on a thread of the bench's, as a terminal's program would do.
    (asyncio's subprocess streams, which drove it before, cost the bench ~150 us of CPU a
    line, counted against the plain client: the plain process itself spends ~240.)"""

    PROMPT = b"(Pdb) "

    def __init__(self, stdin: int, stdout: int) -> None:
        self._stdin, self._stdout = stdin, stdout

    def read_prompt(self) -> bytes:
        """What comes up to the next prompt (BenchError at the end of the output)."""
        text = b""
        while not text.endswith(self.PROMPT):
            chunk = os.read(self._stdout, 65536)
            if not chunk:
                raise BenchError(f"attach --plain ended: {text[-200:]!r}")
            text += chunk
        return text

    def blocks(self, count: int) -> Measure:
        """A measure of `count` `p x`, one sample each, timed on the thread that types them."""
        def block() -> list[float]:
            samples = []
            for _ in range(count):
                start = time.perf_counter()
                os.write(self._stdin, b"p x\n")
                reply = self.read_prompt()
                samples.append(time.perf_counter() - start)
                if b"'rank': 1" not in reply:
                    raise BenchError(f"unexpected reply to `p x` in attach --plain: {reply!r}")
            return samples

        async def measure() -> list[float]:
            return await asyncio.to_thread(block)

        return measure


@dataclass(frozen=True)
class Config:
    """How much to measure."""

    workers: int = 32  # real worker processes of the attach, cast and continue paths
    big: int = 0  # simulated sessions of the --big paths (0: skipped)
    sessions: int = 10_000  # simulated sessions listed
    schedule: tuple[int, int, int] = (64, 4, 1024)  # p, v, m
    block: int = 20  # round trips per block of an attach path
    attach_reps: int = 15  # blocks of each attach path (of each round, for run_p)
    run_rounds: int = 5  # run_p's rounds, each with a fresh pair of workers
    cast_reps: int = 30
    continue_reps: int = 16  # (8 left its median moving by 0.2 from one run to the next)
    big_reps: int = 10
    list_reps: int = 15
    cli_reps: int = 7
    schedule_reps: int = 3
    memory_sessions: int = 2000  # live sessions (and raw streams) whose memory is counted
    start_reps: int = 15  # fresh `meshdbg list --json` processes
    work_s: float = 0.2  # a worker's "work" between two breakpoints
    same_grpc: bool = False  # the floors' servers on the gRPC pollers the `meshdbg` command picks too


QUICK = dict(block=5, attach_reps=4, run_rounds=2, cast_reps=4, continue_reps=3, big_reps=2, list_reps=3, cli_reps=2,
             schedule_reps=1, memory_sessions=200, start_reps=3)

class Bench:
    """The processes of one run and the paths measured over them."""

    def __init__(self, config: Config, procs: Processes, tmp: Path, report: Report) -> None:
        self.config, self.procs, self.report = config, procs, report
        self.token = secrets.token_urlsafe(32)
        self.env = {**os.environ, "MESHDBG_TOKEN": self.token, "MESHDBG_CONNECTION_FILE": str(tmp / "connection.json")}
        self.env.pop("MESHDBG_ADDR", None)
        experiments = grpc_engine.classic_pollers() if config.same_grpc else None
        # a floor's server: a process in the role of `meshdbg serve`, on the same pollers with --same-grpc
        self.floor_server_env = self.env if experiments is None else {**self.env, grpc_engine.VARIABLE: experiments}
        self.pids: dict[str, int] = {}
        self.echoes: dict[str, list[int]] = {}  # each relay's echo worker processes
        self.script = shutil.which("meshdbg", path=str(Path(sys.executable).parent)) or shutil.which("meshdbg")

    async def serve(self) -> str:
        """The address of a new `meshdbg serve`."""
        server = self.procs.spawn([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], self.env,
                                  stdout=subprocess.PIPE, serves=True)
        addr = await self.procs.first_line(server, "meshdbg serve")
        self.pids[addr] = server.pid
        return addr

    def pid_of(self, addr: str) -> int:
        """The process of the server (`serve` or relay) this bench started at `addr`."""
        return self.pids[addr]

    def spawn_worker(self, addr: str, rank: int, rounds: int) -> int:
        """A real worker (bench_core_worker.py) stopping `rounds` times at a breakpoint: its pid."""
        return self.procs.spawn([sys.executable, str(HERE / "bench_core_worker.py"), str(rounds),
                                 str(self.config.work_s)], worker_env({**self.env, "MESHDBG_ADDR": addr}, rank)).pid

    async def relay(self, workers: int, aio: bool = False) -> str:
        """The address of a relay with `workers` echo workers connected (sync processes, or
        grpc.aio streams of one process)."""
        echo = str(HERE / "bench_core_echo.py")
        relay = self.procs.spawn([sys.executable, echo, "--relay"], self.floor_server_env, stdout=subprocess.PIPE,
                                 serves=True)
        addr = f"127.0.0.1:{await self.procs.first_line(relay, 'the relay')}"
        self.pids[addr] = relay.pid
        if aio and workers:
            self.echoes[addr] = [self.procs.spawn([sys.executable, echo, "--aio-workers", addr, str(workers)], self.env,
                                                            serves=True).pid]
        else:
            self.echoes[addr] = [self.procs.spawn([sys.executable, echo, "--worker", addr], self.env, serves=True).pid
                                 for _ in range(workers)]
        await self.relayed(addr, workers)
        return addr

    async def relayed(self, addr: str, workers: int) -> None:
        """Wait until the relay at `addr` has `workers` echo streams connected."""
        async with grpc.aio.insecure_channel(addr) as channel:
            count = channel.unary_unary("/bench.Relay/Count")
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while int(await count(b"")) < workers:
                if time.monotonic() > deadline:
                    raise BenchError(f"fewer than {workers} echo workers reached the relay")
                await asyncio.sleep(0.05)

    # ---- attach, cast, continue on real workers ---------------------------------------

    async def real_workers(self) -> None:
        c = self.config
        two_hop, fan_out = await self.relay(1), await self.relay(c.workers)
        addr = await self.serve()
        rounds = c.continue_reps + 2
        workers = [self.spawn_worker(addr, rank, rounds) for rank in range(c.workers)]
        async with ControlClient(ConnectionInfo(addr, self.token)) as client, \
                grpc.aio.insecure_channel(two_hop) as hop_channel, grpc.aio.insecure_channel(fan_out) as fan_channel:
            await wait_stopped(client, c.workers, STOP_TIMEOUT_S)
            hop, fan = hop_channel.stream_stream(RELAY_METHOD)(), fan_channel.stream_stream(RELAY_METHOD)()
            await self.attach_paths(client, addr, hop, CpuMeter({
                "ours": {"client": [ME], "server": [self.pid_of(addr)], "workers": workers[:1]},
                "plain": {"client": [ME], "server": [self.pid_of(addr)], "workers": workers[1:2]},
                "floor": {"client": [ME], "server": [self.pid_of(two_hop)], "workers": self.echoes[two_hop]}}))
            await self.cast_path("cast", f"cast_{c.workers}", client, fan, c.workers, c.cast_reps, CpuMeter({
                "ours": {"client": [ME], "server": [self.pid_of(addr)], "workers": workers},
                "floor": {"client": [ME], "server": [self.pid_of(fan_out)], "workers": self.echoes[fan_out]}}))
            await self.continue_path("continue", f"continue_{c.workers}", client, fan, c.workers, c.continue_reps,
                                     workers)
            for call in (hop, fan):
                call.cancel()

    async def attach_paths(self, client: ControlClient, addr: str, hop: grpc.aio.StreamStreamCall,
                           meter: CpuMeter) -> None:
        c = self.config
        plain = subprocess.Popen([self.script, "attach", "--plain", "1", "--addr", addr], env=self.env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        meter.sides["plain"]["client"].append(plain.pid)  # the bench's reads and writes, and the plain client
        assert plain.stdin is not None and plain.stdout is not None
        typed = PlainTerminal(plain.stdin.fileno(), plain.stdout.fileno())
        try:
            await asyncio.wait_for(asyncio.to_thread(typed.read_prompt), STOP_TIMEOUT_S)
            async with client.attach(rank=0) as pdb:
                measures = {"api": meter.metered("ours", blocks(p_x(pdb, 0), c.block)),
                            "floor": meter.metered("floor", blocks(lambda: round_trip(hop, PAYLOAD), c.block)),
                            "plain": meter.metered("plain", typed.blocks(c.block))}
                for measure in measures.values():  # warm-up
                    await measure()
                samples = await interleaved(measures, c.attach_reps)
        finally:
            plain.kill()
            await asyncio.to_thread(plain.wait)
            plain.stdin.close()
            plain.stdout.close()
        cpu = meter.per_operation_us()
        self.report.ratio("attach_p_api", "attach_p_api", samples["api"], samples["floor"], "two-hop echo",
                          cpu_us={"ours": cpu["ours"], "floor": cpu["floor"]})
        floor_ms = statistics.median(samples["floor"]) * 1e3
        self.report.ratio("attach_p_plain", "attach_p_plain", samples["plain"], samples["api"], "attach_p_api",
                          ratio_to_two_hop=round(statistics.median(samples["plain"]) * 1e3 / floor_ms, 2),
                          cpu_us={"ours": cpu["plain"], "floor": cpu["ours"]})

    async def cast_path(self, target: str, path: str, client: ControlClient, fan: grpc.aio.StreamStreamCall,
                        count: int, reps: int, meter: CpuMeter | None = None) -> None:
        """`cast all 'p rank'` against the fan-out floor (`meter`: the CPU of each side's processes)."""
        async def cast() -> None:
            results = await client.cast("all", "p rank", timeout_s=STOP_TIMEOUT_S)
            if len(results) != count or not all(r.ok for r in results):
                raise BenchError(f"cast reached {sum(r.ok for r in results)} of {count} sessions")

        measures = {"ours": timed(cast), "floor": timed(lambda: round_trip(fan, PAYLOAD, count))}
        for measure in measures.values():
            await measure()
        if meter is not None:
            measures = {side: meter.metered(side, measure) for side, measure in measures.items()}
        samples = await interleaved(measures, reps)
        extra = {"cpu_us": meter.per_operation_us()} if meter is not None else {}
        self.report.ratio(path, target, samples["ours"], samples["floor"], f"fan-out to {count} streams", **extra)

    async def continue_path(self, target: str, path: str, client: ControlClient, fan: grpc.aio.StreamStreamCall,
                            count: int, reps: int, workers: list[int] | None = None) -> None:
        """Each repetition: the fan-out floor, and `resume("all")` (timed), then (untimed) every
        session stopping again; in alternating order. With the `workers`' processes: also what
        one stop costs a worker in CPU, all of it (its session opened, the stop, the continue,
        the session ended: `stop_cpu_ms`), which the continue's window shows only in part."""
        async def resume() -> list[float]:
            await wait_stopped(client, count, STOP_TIMEOUT_S)
            start = time.perf_counter()
            resumed = await client.resume("all", timeout_s=STOP_TIMEOUT_S)
            elapsed = time.perf_counter() - start
            if len(resumed) != count:
                raise BenchError(f"continue resumed {len(resumed)} of {count} sessions")
            return [elapsed]

        spent = -sum(map(process_cpu_s, workers or []))
        samples = await interleaved({"ours": resume, "floor": timed(lambda: round_trip(fan, PAYLOAD, count))}, reps)
        spent += sum(map(process_cpu_s, workers or []))
        extra = {"stop_cpu_ms": round(spent / (reps * len(workers)) * 1e3, 2)} if workers else {}
        self.report.ratio(path, target, samples["ours"], samples["floor"], f"fan-out to {count} streams",
                          work_s=self.config.work_s, **extra)

    # ---- 1,024 simulated sessions ------------------------------------------------------

    async def simulated_sessions(self) -> None:
        c = self.config
        fan_out = await self.relay(c.big, aio=True)
        addr = await self.serve()
        rounds = c.big_reps + 2
        self.procs.spawn([sys.executable, str(HERE / "bench_scale_worker.py"), addr, self.token, "0", str(c.big),
                          "--answer", str(rounds), str(c.work_s)], self.env, stdin=subprocess.PIPE)
        async with ControlClient(ConnectionInfo(addr, self.token)) as client, \
                grpc.aio.insecure_channel(fan_out) as fan_channel:
            await wait_stopped(client, c.big, STOP_TIMEOUT_S)
            fan = fan_channel.stream_stream(RELAY_METHOD)()
            await self.cast_path("cast_big", f"cast_{c.big}", client, fan, c.big, c.big_reps)
            await self.continue_path("continue_big", f"continue_{c.big}", client, fan, c.big, c.big_reps)
            fan.cancel()

    # ---- listings of 10,000 ------------------------------------------------------------

    async def listings(self) -> None:
        c = self.config
        echo = self.procs.spawn([sys.executable, str(HERE / "bench_core_echo.py")], self.floor_server_env,
                                stdout=subprocess.PIPE, serves=True)
        blob_addr = f"127.0.0.1:{await self.procs.first_line(echo, 'the echo server')}"
        addr = await self.serve()
        processes = max(1, min(10, c.sessions // 200))
        share = c.sessions // processes
        for index in range(processes):
            size = share + (c.sessions % processes if index == processes - 1 else 0)
            self.procs.spawn([sys.executable, str(HERE / "bench_scale_worker.py"), addr, self.token,
                              str(index * share), str(size)], self.env, stdin=subprocess.PIPE)
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        async with ControlClient(ConnectionInfo(addr, self.token)) as client, \
                grpc.aio.insecure_channel(blob_addr, options=options) as blob_channel, \
                grpc.aio.insecure_channel(addr, options=options) as raw_channel:
            await wait_stopped(client, c.sessions, STOP_TIMEOUT_S * 2)
            listing = await raw_channel.unary_unary(LIST_METHOD)(pb.ListRequest().SerializeToString(),
                                                                 metadata=client.connection.metadata())
            await blob_channel.unary_unary("/bench.Blob/Set")(listing)
            get = blob_channel.unary_unary("/bench.Blob/Get")

            async def raw_list() -> None:
                pb.ListReply.FromString(await get(b""))

            async def api_list() -> None:
                if len(await client.list()) != c.sessions:
                    raise BenchError("a listing lost sessions")

            measures = {"ours": timed(api_list), "floor": timed(raw_list)}
            for measure in measures.values():
                await measure()
            samples = await interleaved(measures, c.list_reps)
            self.report.ratio("list_api", "list_api", samples["ours"], samples["floor"], "raw unary, parsed",
                              sessions=c.sessions, megabytes=round(len(listing) / 1e6, 2))
            await self.list_cli(addr, blob_addr)

    async def list_cli(self, addr: str, blob_addr: str) -> None:
        ours = [self.script, "list", "--json", "--addr", addr]
        floor = [sys.executable, str(HERE / "bench_floor_cli.py"), blob_addr]
        env = {k: v for k, v in self.env.items() if k != "PYTHONDONTWRITEBYTECODE"}  # caches on, as for a user
        outputs = {}

        def run(argv: list[str]) -> Measure:
            async def measure() -> list[float]:
                start = time.perf_counter()
                proc = await asyncio.create_subprocess_exec(*argv, env=env, stdout=subprocess.PIPE, cwd=tempfile.gettempdir())
                out, _ = await proc.communicate()
                elapsed = time.perf_counter() - start
                if proc.returncode:
                    raise BenchError(f"{' '.join(argv)} exited with status {proc.returncode}")
                outputs[argv[0]] = out
                return [elapsed]

            return measure

        measures = {"ours": run(ours), "floor": run(floor)}
        for measure in measures.values():
            await measure()
        if json.loads(outputs[ours[0]]) != json.loads(outputs[floor[0]]):
            raise BenchError("bench_floor_cli.py printed another JSON than `meshdbg list --json`")
        samples = await interleaved(measures, self.config.cli_reps)
        self.report.ratio("list_cli", "list_cli", samples["ours"], samples["floor"],
                          "fresh process, same bytes, same JSON", sessions=self.config.sessions)

    # ---- the scheduler -------------------------------------------------------------

    async def schedule(self) -> None:
        from meshdbg.worker.pipelining.cli import main as schedule_main
        from meshdbg.worker.pipelining.schedules import generate

        p, v, m = self.config.schedule
        actions = sum(len(rank) for rank in generate("interleaved-1f1b", p, v, m).actions)
        argv = ["--kind", "interleaved-1f1b", "--ranks", str(p), "--stages-per-rank", str(v), "--microbatches", str(m)]

        async def ours() -> None:
            with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
                if schedule_main(argv):
                    raise BenchError("meshdbg schedule failed")

        async def floor() -> None:
            build_actions(actions)

        measures = {"ours": timed(ours), "floor": timed(floor)}
        for measure in measures.values():  # warm-up: numpy's import is not the command's
            await measure()
        samples = await interleaved(measures, self.config.schedule_reps)
        self.report.ratio("schedule", "schedule", samples["ours"], samples["floor"], "building the actions",
                          p=p, v=v, m=m, actions=actions)


PHASES = {"real": Bench.real_workers, "run": inside_run, "big": Bench.simulated_sessions, "list": Bench.listings,
          "memory": memory, "start": cli_start, "schedule": Bench.schedule}


def parse_args(argv: list[str] | None) -> tuple[Config, list[str], bool]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", action="store_true", help="also cast and continue to 1,024 simulated sessions")
    parser.add_argument("--strict", action="store_true", help="exit 2 when a ratio is past its target")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--only", default="", help=f"comma-separated phases among {', '.join(PHASES)}")
    parser.add_argument("--same-grpc", action="store_true",
                        help="run the floors' servers on the gRPC pollers `meshdbg serve` runs on (README, Speed)")
    parser.add_argument("--workers", type=int, default=Config.workers)
    parser.add_argument("--big-sessions", type=int, default=1024)
    parser.add_argument("--sessions", type=int, default=Config.sessions, help="sessions listed")
    parser.add_argument("--schedule", default="64,4,1024", metavar="P,V,M")
    args = parser.parse_args(argv)
    p, v, m = (int(n) for n in args.schedule.split(","))
    phases = args.only.split(",") if args.only else [name for name in PHASES if name != "big" or args.big]
    unknown = set(phases) - set(PHASES)
    if unknown:
        parser.error(f"unknown phase {', '.join(sorted(unknown))}")
    config = Config(workers=args.workers, big=args.big_sessions if "big" in phases else 0, sessions=args.sessions,
                    schedule=(p, v, m), same_grpc=args.same_grpc, **(QUICK if args.quick else {}))
    return config, phases, args.strict


def main(argv: list[str] | None = None) -> int:
    config, phases, strict = parse_args(argv)
    report = Report()
    started = time.monotonic()
    print(json.dumps({"bench": "floor", "config": config.__dict__, "phases": phases,
                      "load_average": os.getloadavg()}), flush=True)
    with tempfile.TemporaryDirectory(prefix="meshdbg-floor-") as tmp, open(Path(tmp) / "stderr.log", "wb") as log:
        for phase in phases:
            def run_phase(procs: Processes, phase: str = phase) -> Coroutine[Any, Any, None]:
                return PHASES[phase](Bench(config, procs, Path(tmp), report))
            # run_p is `meshdbg run`'s path in this process: on the loop `meshdbg run` runs on
            # (its floor, one hop from this process, too).
            on = loop_factory("run") if phase == "run" else None
            if not ran("bench_floor", run_phase, log, Path(tmp) / "stderr.log", on):
                return 1
    print(json.dumps({"summary": "floor", "ratios": report.ratios, "failed": report.failed,
                      "seconds": round(time.monotonic() - started, 1), "load_average": os.getloadavg()}), flush=True)
    return 2 if strict and report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
