"""Multi-host benchmark (issue 19): launch to every rank stopped, how soon a lost host is
noticed, and what TLS adds to an attached `p` round trip.

    python bench/bench_multihost.py [--hosts 2] [--ranks-per-host 2] [--repeats N] [--metrics launch,loss,tls]

On this machine, with hosts in network namespaces (tests/host/netns.py: the run on `c`, agents
on `h1`..`hH`, TLS on as off loopback):

1. launch_stopped_join_HxR: from starting `meshdbg run --on join --mesh hosts=H,gpus=R` (and its
   H `meshdbg host` agents as soon as the join line is out) until `list` shows all H*R ranks
   stopped at their breakpoint();
2. launch_stopped_local_N: the same for a single-host `meshdbg run --mesh hosts=1,gpus=N`
   (N = H*R; loopback, no TLS), the floor measured in the same run, interleaved with (1);
3. host_lost_crash / host_lost_partition: from SIGKILLing every process of the last host /
   setting its link down until the run prints `(host lost)`;
4. attach_p_plain / attach_p_tls: `p x` round trips through a session attached to one stopped
   worker of a loopback `meshdbg serve --port 0`, without and with `--tls` (TLS on both hops:
   client to server, server to worker), the two alternating; plain is the floor.

Prints one JSON object per metric (milliseconds), then a summary object. The launch is
measured inside the run's host (`--probe`), so its client reaches the run as a client on `c`
would.
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
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[-1] if len(ms) > 1 else ms[0]
    return {"median_ms": round(statistics.median(ms), 2), "p95_ms": round(p95, 2), "min_ms": round(ms[0], 2),
            "max_ms": round(ms[-1], 2), "samples": len(ms)}


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
        asyncio.run(_all_stopped(config["ranks"], start + 180))
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


async def attach_round_trips(tls: bool, warmup: int, roundtrips: int, folder: Path) -> list[float]:
    """`roundtrips` timed `p x` through a session attached to a worker of a loopback `serve` (`--tls` or not)."""
    from bench_core import Config, Processes, attach_p_samples, spawn_workers, wait_stopped

    from meshdbg.debugger.control import ControlClient
    from meshdbg.wire.connection import ConnectionInfo, read_server_file

    token = secrets.token_urlsafe(32)
    connection_file = folder / f"serve-{'tls' if tls else 'plain'}.json"
    env = {**os.environ, "MESHDBG_TOKEN": token, "MESHDBG_CONNECTION_FILE": str(connection_file)}
    with open(folder / "serve.err", "ab") as log:
        procs = Processes(log)
        try:
            server = procs.spawn([sys.executable, "-m", "meshdbg", "serve", "--port", "0", "--quiet",
                                  *(["--tls"] if tls else [])], env, stdout=subprocess.PIPE)
            addr = await procs.first_line(server, "meshdbg serve")
            fingerprint = read_server_file(connection_file).info.fingerprint
            if bool(fingerprint) != tls:
                raise RuntimeError(f"serve {'without' if tls else 'with'} TLS")
            spawn_workers(procs, {**env, "MESHDBG_ADDR": addr, "MESHDBG_TLS_FINGERPRINT": fingerprint},
                          Config(workers=1, warmup=warmup, roundtrips=roundtrips, casts=0, continue_rounds=1, work_s=0))
            async with ControlClient(ConnectionInfo(addr, token, fingerprint)) as client:
                await wait_stopped(client, 1, 60)
                return await attach_p_samples(client, warmup, roundtrips)
        finally:
            procs.stop_all()


def launch_and_loss(args: argparse.Namespace, folder: Path, samples: dict[str, list[float]]) -> None:
    """Launch (join against local, interleaved) and, with `loss`, one crash and one partition, per repeat."""
    from netns import Cluster

    hosts = [f"h{i}" for i in range(1, args.hosts + 1)]
    ranks = args.hosts * args.ranks_per_host
    local = {"run": ["--mesh", f"hosts=1,gpus={ranks}"], "agents": [], "ranks": ranks}
    runs = (["launch"] if "launch" in args.metrics else []) + (["crash", "partition"] if "loss" in args.metrics else [])
    for _ in range(args.repeats):
        for what in runs:
            if what == "launch":
                measured = probe(dict(local, token=secrets.token_urlsafe(16),
                                      connection_file=str(folder / "local.json")))
                samples.setdefault(f"launch_stopped_local_{ranks}", []).append(measured["launch_s"])
            with Cluster.build(["c", *hosts], folder) as cluster:
                last = cluster.ns(hosts[-1])
                faults = {"crash": f"kill -9 $(ip netns pids {last})", "partition": f"ip -n {last} link set eth0 down"}
                config = {"run": ["--on", "join", "--bind", cluster.address("c"),
                                  "--mesh", f"hosts={args.hosts},gpus={args.ranks_per_host}"],
                          "agents": [cluster.command(h, []) for h in hosts], "ranks": ranks,
                          "token": secrets.token_urlsafe(16), "connection_file": str(folder / "join.json"),
                          "fault": faults.get(what, "")}
                done = cluster.run("c", [sys.executable, __file__, "--probe", json.dumps(config)], dict(os.environ),
                                   timeout=300)
                if done.returncode != 0:
                    raise RuntimeError(done.stderr)
                measured = json.loads(done.stdout.splitlines()[-1])
                if what == "launch":
                    samples.setdefault(f"launch_stopped_join_{args.hosts}x{args.ranks_per_host}", []).append(
                        measured["launch_s"])
                else:
                    samples.setdefault(f"host_lost_{what}", []).append(measured["lost_s"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2, help="hosts of the joined run (network namespaces)")
    parser.add_argument("--ranks-per-host", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--metrics", default="launch,loss,tls", type=lambda text: set(text.split(",")),
                        help="which of launch, loss, tls to measure")
    parser.add_argument("--roundtrips", type=int, default=500, help="timed `p x` round trips per TLS/plain repeat")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(probe(json.loads(args.probe))), flush=True)
        return 0
    samples: dict[str, list[float]] = {}
    repeat_medians: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        launch_and_loss(args, folder, samples)
        for repeat in range(args.repeats if "tls" in args.metrics else 0):
            for tls in ((False, True) if repeat % 2 == 0 else (True, False)):
                name = "attach_p_tls" if tls else "attach_p_plain"
                measured = asyncio.run(attach_round_trips(tls, 50, args.roundtrips, folder))
                samples.setdefault(name, []).extend(measured)
                repeat_medians.setdefault(name, []).append(round(statistics.median(measured) * 1000, 3))
    records = [{"metric": name, **_stats(values), **({"repeat_medians_ms": repeat_medians[name]}
                                                      if name in repeat_medians else {})}
               for name, values in samples.items()]
    for record in records:
        print(json.dumps(record), flush=True)
    summary = {r["metric"]: r["median_ms"] for r in records}
    by_name = {r["metric"]: r for r in records}
    if "attach_p_tls" in by_name:
        summary["tls_extra_median_ms"] = round(by_name["attach_p_tls"]["median_ms"] - by_name["attach_p_plain"]["median_ms"], 2)
        summary["tls_extra_p95_ms"] = round(by_name["attach_p_tls"]["p95_ms"] - by_name["attach_p_plain"]["p95_ms"], 2)
    print(json.dumps({"summary": summary, "load_average": os.getloadavg()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
