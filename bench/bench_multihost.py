"""Multi-host benchmark (issue 19): launch to every rank stopped, and how soon a lost host is noticed.

    python bench/bench_multihost.py [--repeats N]      # as root: builds network-namespace hosts

On this machine, with hosts in network namespaces (tests/host/netns.py: the run on `c`, agents
on `h1`, `h2`, TLS on as off loopback):

1. launch_stopped_join_2x2: from starting `meshdbg run --on join --mesh hosts=2,gpus=2` (and its
   two `meshdbg host` agents as soon as the join line is out) until `list` shows all 4 ranks
   stopped at their breakpoint();
2. launch_stopped_local_4: the same for a single-host `meshdbg run --mesh hosts=1,gpus=4`
   (loopback, no TLS), the baseline;
3. host_lost_crash / host_lost_partition: from SIGKILLing every process of h2 / setting its
   link down until the run prints `(host lost)`.

Prints one JSON object per metric (milliseconds), then a summary object. The measuring runs
inside the run's host (`--probe`), so its client reaches the run as a client on `c` would.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "host"))
SCRIPT = HERE.parent / "tests" / "host" / "scripts" / "where.py"


def _stats(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {"median_ms": round(statistics.median(ms), 1), "min_ms": round(ms[0], 1), "max_ms": round(ms[-1], 1),
            "samples": len(ms)}


async def _all_stopped(count: int, deadline: float) -> None:
    from meshdbg.debugger.control import ControlClient
    from meshdbg.wire.errors import MeshdbgError

    while time.monotonic() < deadline:
        try:
            async with await ControlClient.connect() as client:
                while time.monotonic() < deadline:
                    if sum(s.state == "stopped" for s in await client.list()) == count:
                        return
                    await asyncio.sleep(0.01)
        except MeshdbgError:
            await asyncio.sleep(0.01)  # not serving yet
    raise RuntimeError(f"{count} ranks did not stop in time")


def probe(config: dict) -> dict:
    """One launch (and, with a fault, one host loss) measured from where the run runs."""
    os.environ.update(MESHDBG_TOKEN=config["token"], MESHDBG_CONNECTION_FILE=config["connection_file"])
    env = dict(os.environ)
    err_path = Path(config["connection_file"]).with_suffix(".err")
    start = time.monotonic()
    with open(err_path, "w") as err:
        run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", *config["run"], str(SCRIPT)], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    agents = []
    try:
        if config["agents"]:
            url = ""
            while not url:
                url = next((w for w in err_path.read_text().split() if w.startswith("meshdbg://")), "")
                time.sleep(0.005)
            agents = [subprocess.Popen([*wrapper, sys.executable, "-m", "meshdbg", "host", "--join", url], env=env,
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                      for wrapper in config["agents"]]
        asyncio.run(_all_stopped(config["ranks"], start + 60))
        result = {"launch_s": time.monotonic() - start}
        if config.get("fault"):
            fault = time.monotonic()
            subprocess.run(config["fault"], shell=True, check=True)
            while "(host lost)" not in err_path.read_text():
                if time.monotonic() - fault > 20:
                    raise RuntimeError("the host loss was not noticed")
                time.sleep(0.005)
            result["lost_s"] = time.monotonic() - fault
        return result
    finally:
        run.terminate()
        run.wait(30)
        for agent in agents:
            agent.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(json.loads(args.probe))), flush=True)
        return 0
    from netns import Cluster

    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        local = {"run": ["--mesh", "hosts=1,gpus=4"], "agents": [], "ranks": 4}
        for _ in range(args.repeats):
            measured = probe(dict(local, token=secrets.token_urlsafe(16), connection_file=str(folder / "local.json")))
            samples.setdefault("launch_stopped_local_4", []).append(measured["launch_s"])
        for fault in ("", "crash", "partition") * args.repeats:
            with Cluster.build(["c", "h1", "h2"], folder) as cluster:
                h2 = cluster.ns("h2")
                faults = {"crash": f"kill -9 $(ip netns pids {h2})", "partition": f"ip -n {h2} link set eth0 down"}
                config = {"run": ["--on", "join", "--bind", cluster.address("c"), "--mesh", "hosts=2,gpus=2"],
                          "agents": [cluster.command(h, []) for h in ("h1", "h2")], "ranks": 4,
                          "token": secrets.token_urlsafe(16), "connection_file": str(folder / "join.json"),
                          "fault": faults.get(fault, "")}
                done = cluster.run("c", [sys.executable, __file__, "--probe", json.dumps(config)], dict(os.environ),
                                   timeout=120)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr)
                measured = json.loads(done.stdout.splitlines()[-1])
                if not fault:
                    samples.setdefault("launch_stopped_join_2x2", []).append(measured["launch_s"])
                else:
                    samples.setdefault(f"host_lost_{fault}", []).append(measured["lost_s"])
    records = [{"metric": name, **_stats(values)} for name, values in samples.items()]
    for record in records:
        print(json.dumps(record), flush=True)
    print(json.dumps({"summary": {r["metric"]: r["median_ms"] for r in records}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
