"""Where a `p x` inside `meshdbg run` spends its time: the round trip cut into legs, each
leg's median, from moments marked in both processes on the machine's one monotonic clock.

    python bench/bench_timeline.py [--count N] [--watch]

bench_floor.py's run_p gives the ratio to the one-hop floor; this says where the time goes.
The setting is run_p's: a `DebugClient` and its client `ControlClient.beside` in this process
and loop, as `meshdbg run`'s console, and one real worker (bench_timeline_worker.py, which is
bench_core_worker.py with its moments marked). Here the server's side is marked the same way,
by wrapping its functions in this process: the line sent by the client (`sent`), its write to
the worker's stream begun (`written`), the worker's prompt taken (`prompt`) and handled
(`handled`), the reply back with the client (`returned`). The legs, in order:

| leg | from → to | where |
|---|---|---|
| client_to_write | sent → written | the client's and the server's Python, until gRPC's write |
| to_worker | written → received | gRPC both sides, the kernel, the worker's thread waking |
| worker_before_pdb | received → command | the worker, until pdb's command begins |
| pdb_command | command → done | pdb's `p x` (its output written to meshdbg's stdout) |
| worker_after_pdb | done → replying | the worker: its prompt message built |
| to_server | replying → prompt | gRPC both sides, the kernel, the server's loop waking |
| server_prompt | prompt → handled | `Session.on_prompt` |
| back_to_client | handled → returned | the waiting command resumed, its reply to the client |

Prints one JSON line: each leg's median in microseconds, their sum, the median round trip,
and local pdb's `p x` (precmd → postcmd, in this process, its output to a StringIO) for the
pdb_command leg to be read against. About 10 s. The wrappers add a call each (under a
microsecond); the round trip is bench_floor.py's figure, not this one's.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import json
import os
import pdb
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from meshdbg.debugger import grpc_engine

grpc_engine.load_grpc()  # before anything loads gRPC (bench_core does): as `meshdbg run` loads it, and bench_floor.py's run_p

from bench_core import BenchError, Processes, ran, wait_stopped  # noqa: E402
from bench_floor_measure import STOP_TIMEOUT_S  # noqa: E402

from meshdbg.debugger import attached_session  # noqa: E402,F401  (gRPC loaded first; loaded before the first attach)
from meshdbg.debugger.cli import loop_factory  # noqa: E402
from meshdbg.debugger.control import ControlClient  # noqa: E402
from meshdbg.debugger.service import DebugClient  # noqa: E402
from meshdbg.debugger.servicer import StreamWriter  # noqa: E402
from meshdbg.debugger.sessions import Session  # noqa: E402

HERE = Path(__file__).resolve().parent
LEGS = (("client_to_write", "sent", "written"), ("to_worker", "written", "received"),
        ("worker_before_pdb", "received", "command"), ("pdb_command", "command", "done"),
        ("worker_after_pdb", "done", "replying"), ("to_server", "replying", "prompt"),
        ("server_prompt", "prompt", "handled"), ("back_to_client", "handled", "returned"))
WARMUP = 300
MARKS: list[tuple[str, int]] = []


def mark(name: str) -> None:
    MARKS.append((name, time.monotonic_ns()))


def mark_server() -> None:
    """Wrap the server's side of this process: a write to a worker's stream, a prompt taken."""
    write, on_prompt = StreamWriter.__call__, Session.on_prompt

    @functools.wraps(write)
    async def marked_write(self: StreamWriter, message: Any) -> None:
        mark("written")
        await write(self, message)

    @functools.wraps(on_prompt)
    def marked_on_prompt(self: Session, prompt: Any) -> None:
        mark("prompt")
        on_prompt(self, prompt)
        mark("handled")

    StreamWriter.__call__ = marked_write  # type: ignore[method-assign]
    Session.on_prompt = marked_on_prompt  # type: ignore[method-assign]


def round_trips(marks: list[tuple[str, int]]) -> list[dict[str, int]]:
    """The marks of each round trip, `sent` to `returned` (the first of each name), complete ones only."""
    trips: list[dict[str, int]] = []
    current: dict[str, int] | None = None
    for name, ns in sorted(marks, key=lambda m: m[1]):
        if name == "sent":
            current = {"sent": ns}
        elif current is not None:
            current.setdefault(name, ns)
            if name == "returned":
                trips.append(current)
                current = None
    names = {name for _, begin, end in LEGS for name in (begin, end)}
    return [trip for trip in trips if names <= trip.keys()]


def local_pdb_command_us(count: int) -> float:
    """Median precmd → postcmd of local pdb's `p x` in this process (output to a StringIO)."""
    spans: list[int] = []

    class Timed(pdb.Pdb):
        def precmd(self, line: str) -> str:
            self._began = time.monotonic_ns()
            return super().precmd(line)

        def postcmd(self, stop: bool, line: str) -> bool:
            spans.append(time.monotonic_ns() - self._began)
            return super().postcmd(stop, line)

    debugger = Timed(stdin=io.StringIO("p x\n" * count + "continue\n"), stdout=io.StringIO())
    debugger.use_rawinput = False
    x = {"rank": 0, "round": 0, "loss": 0.0}  # noqa: F841  (what `p x` prints)
    debugger.set_trace()
    return statistics.median(spans) / 1e3


async def watched(client: ControlClient) -> int:
    """What `meshdbg run`'s console does beside its attach: follow every change of the
    sessions (`ControlClient.watch`, as the console's board); the changes seen, once cancelled."""
    seen = 0
    try:
        async for _ in client.watch(exits=True):
            seen += 1
    except asyncio.CancelledError:
        pass
    return seen


async def measure(procs: Processes, count: int, tmp: Path, watch: bool) -> None:
    """Mark `count` round trips (after WARMUP) and print their legs (`watch`: with the
    console's watch beside them)."""
    token = secrets.token_hex(16)
    server = DebugClient(token=token, publish=False, what="bench_timeline")
    await server.start()
    marks_file = tmp / "worker_marks.txt"
    env = {**os.environ, "MESHDBG_TOKEN": token, "MESHDBG_ADDR": server.connection.addr, "MESHDBG_RANK": "0",
           "MESHDBG_NAME": "bench", "MESHDBG_COORDS": "hosts=0,gpus=0", "MESHDBG_CONNECTION_FILE": str(tmp / "c.json"),
           "PYTHONBREAKPOINT": "meshdbg.worker.remote_breakpointhook"}
    worker = procs.spawn([sys.executable, str(HERE / "bench_timeline_worker.py"), str(marks_file), "1", "0"], env)
    try:
        async with ControlClient.beside(server) as client:
            await wait_stopped(client, 1, STOP_TIMEOUT_S, [worker])
            watcher = asyncio.create_task(watched(client)) if watch else None
            watch_events = 0
            async with client.attach(rank=0) as session:
                for index in range(WARMUP + count):
                    if index == WARMUP:
                        MARKS.clear()
                    mark("sent")
                    reply = await session.send("p x")
                    mark("returned")
                    if "'rank': 0" not in reply.output:
                        raise BenchError(f"unexpected reply to `p x`: {reply.output!r}")
            if watcher is not None:
                watcher.cancel()
                watch_events = await watcher
            await client.resume("all", timeout_s=STOP_TIMEOUT_S)
        if await asyncio.to_thread(worker.wait, STOP_TIMEOUT_S):
            raise BenchError(f"the worker exited with status {worker.returncode}")
    finally:
        await server.stop(0)
    worker_marks = [(name, int(ns)) for name, ns in (line.split() for line in marks_file.read_text().splitlines())]
    trips = round_trips(MARKS + worker_marks)
    if len(trips) < count // 2:
        raise BenchError(f"only {len(trips)} of {count} round trips were marked whole")
    legs = {leg: round(statistics.median(trip[end] - trip[begin] for trip in trips) / 1e3, 1)
            for leg, begin, end in LEGS}
    print(json.dumps({"bench": "timeline", "watch": watch, "round_trips": len(trips), "legs_us": legs,
                      "legs_sum_us": round(sum(legs.values()), 1),
                      "round_trip_us": round(statistics.median(trip["returned"] - trip["sent"] for trip in trips) / 1e3, 1),
                      "local_pdb_command_us": round(local_pdb_command_us(count), 1),
                      **({"watch_events_per_round_trip": round(watch_events / (WARMUP + count), 2)} if watch else {}),
                      "load_average": os.getloadavg()}), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="round trips marked (after a warm-up of 300)")
    parser.add_argument("--watch", action="store_true",
                        help="with the console's watch of the sessions beside the attach, as in `meshdbg run`")
    args = parser.parse_args()
    mark_server()
    with tempfile.TemporaryDirectory(prefix="meshdbg-timeline-") as tmp, open(Path(tmp) / "log", "wb") as log:
        # on the loop `meshdbg run` runs on (uvloop's), as bench_floor.py's run_p
        return 0 if ran("bench_timeline", lambda procs: measure(procs, args.count, Path(tmp), args.watch), log, Path(tmp) / "log",
                        loop_factory("run")) else 1


if __name__ == "__main__":
    sys.exit(main())
