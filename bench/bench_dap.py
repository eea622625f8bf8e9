"""`meshdbg dap` against debugpy: what an IDE waits for at a stop (issue 20's figures).

    python bench/bench_dap.py [--ranks 64] [--repeat 50]

1. one_rank: `stackTrace` + `scopes` + `variables` (Locals), one after the other as VS Code
   sends them at a stop, on one rank stopped under a real `meshdbg serve` with `meshdbg dap`;
   the same requests to debugpy (its adapter and its server, on the same program, one process).
2. group: `threads` then `stackTrace` of every thread, pipelined, for a child session of RANKS
   ranks stopped at the same line; the same to debugpy, whose process has one thread.

Both run tests/scripts/ide_target.py, stopped in `inner`. Prints one JSON object per metric
and side (median and p90 in ms over REPEAT rounds after a warm-up). Every process it starts
is stopped in a `finally`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "dap")]

from e2e import SCRIPTS, start_server, stop_process, wait_for  # noqa: E402
from ide import Ide, attach, start_adapter, stop_adapter  # noqa: E402

TARGET = SCRIPTS / "ide_target.py"
WARMUP = 5


def timed(round_trip: Callable[[], None], repeat: int) -> dict:
    for _ in range(WARMUP):
        round_trip()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        round_trip()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {"median_ms": round(statistics.median(samples), 2), "p90_ms": round(samples[int(len(samples) * 0.9) - 1], 2)}


def stop_round_trip(ide: Ide, thread_id: int) -> Callable[[], None]:
    """stackTrace, scopes, variables of the top frame's locals, one after the other."""
    def round_trip() -> None:
        frame = ide.ok("stackTrace", threadId=thread_id)["stackFrames"][0]
        scopes = ide.ok("scopes", frameId=frame["id"])["scopes"]
        assert ide.ok("variables", variablesReference=scopes[0]["variablesReference"])["variables"]
    return round_trip


def group_round_trip(ide: Ide) -> Callable[[], None]:
    """threads, then every thread's stackTrace at once (pipelined, as an IDE showing them all)."""
    def round_trip() -> None:
        threads = ide.ok("threads")["threads"]
        asked = {ide.send({"type": "request", "command": "stackTrace", "arguments": {"threadId": t["id"]}})
                 for t in threads}
        while asked:
            answer = ide.wait(lambda m: m["type"] == "response" and m["request_seq"] in asked, "stackTrace responses")
            assert answer["success"], answer
            asked.discard(answer["request_seq"])
        ide.seen.clear()
    return round_trip


def under_meshdbg(ranks: int, repeat: int, scratch: Path) -> dict:
    server = start_server(scratch)
    try:
        for rank in range(ranks):
            server.worker(TARGET.name, rank, f"gpus={rank}")
        server.wait_sessions(ranks, timeout=120)
        adapter, port = start_adapter(server.env)
        try:
            parent = Ide(port, check=False)
            attach(parent, {"meshdbg": {"token": server.env["MESHDBG_TOKEN"]}})
            child = Ide(port, check=False)
            attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
            assert len(child.ok("threads")["threads"]) == ranks
            return {"one_rank": timed(stop_round_trip(child, 1), repeat), "group": timed(group_round_trip(child), repeat)}
        finally:
            stop_adapter(adapter)
    finally:
        server.close()


def under_debugpy(repeat: int, scratch: Path) -> dict:
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("PYTHONBREAKPOINT", None)
    port_file = scratch / "debugpy.port"
    process = subprocess.Popen([sys.executable, "-Xfrozen_modules=off", str(TESTS / "dap" / "under_debugpy.py"),
                                str(port_file), str(TARGET)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, start_new_session=True)
    try:
        ide = Ide(int(wait_for(lambda: port_file.exists() and port_file.read_text(), 30, "debugpy's port")), check=False)
        attach(ide, {"justMyCode": True})
        thread_id = ide.event("stopped", timeout=30)["body"]["threadId"]
        return {"one_rank": timed(stop_round_trip(ide, thread_id), repeat), "group": timed(group_round_trip(ide), repeat)}
    finally:
        stop_process(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dap-") as scratch:
        os.environ["MESHDBG_RUNTIME_DIR"] = str(Path(scratch) / "runtime")
        results = {"debugpy (1 process)": under_debugpy(args.repeat, Path(scratch)),
                   f"meshdbg dap ({args.ranks} ranks)": under_meshdbg(args.ranks, args.repeat, Path(scratch))}
    for side, figures in results.items():
        for metric, figure in figures.items():
            print(json.dumps({"side": side, "metric": metric, **figure}))


if __name__ == "__main__":
    main()
