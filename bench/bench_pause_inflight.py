"""Measure what a pause does to a gloo peer that is already waiting in a collective.

    python bench/bench_pause_inflight.py [--timeout 20] [--pause 60]

`meshdbg run --mesh gpus=2` of a job whose rank 0 enters all_reduce at once and whose rank 1
stops in breakpoint() a second later; the pause lasts --pause seconds (then `meshdbg continue`).
Prints when rank 0's all_reduce returned or failed, and how the job ended. The guard extends
the timeout of collectives started during the pause; gloo fixes a collective's deadline when it
starts, so rank 0's all_reduce still fails at the group's timeout (README, "Pause-safe collectives").
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOB = """
import datetime, os, sys, time
import torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=float(os.environ["PG_TIMEOUT"])))
rank = dist.get_rank()
t = torch.ones(1)
if rank == 1:
    time.sleep(1)
    breakpoint()
start = time.monotonic()
try:
    dist.all_reduce(t)
    print(f"rank {rank}: all_reduce returned after {time.monotonic() - start:.1f} s", flush=True)
except RuntimeError as exc:
    print(f"rank {rank}: all_reduce failed after {time.monotonic() - start:.1f} s: {str(exc).splitlines()[0]}",
          flush=True)
    sys.exit(1)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="the process group's timeout (s)")
    parser.add_argument("--pause", type=float, default=60.0, help="how long rank 1 stays paused (s)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="meshdbg-inflight-"))
    (folder / "job.py").write_text(JOB)
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(folder / "conn.json"), PG_TIMEOUT=str(args.timeout))
    for key in ("MESHDBG_ADDR", "MESHDBG_TOKEN"):
        env.pop(key, None)
    run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--keep-going", "--no-post-mortem", "--mesh", "gpus=2",
                            "job.py"],
                           cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    began = time.monotonic()
    paused = None
    while run.poll() is None and time.monotonic() - began < args.pause + 60:
        listing = subprocess.run([sys.executable, "-m", "meshdbg", "list"], env=env, capture_output=True, text=True)
        if paused is None and "stopped" in listing.stdout:
            paused = time.monotonic()
            print(f"rank 1 paused at {paused - began:.1f} s", flush=True)
        if paused is not None and time.monotonic() - paused >= args.pause:
            subprocess.run([sys.executable, "-m", "meshdbg", "continue"], env=env, capture_output=True)
            print(f"continued after a {time.monotonic() - paused:.1f} s pause", flush=True)
            break
        time.sleep(0.5)
    out, _ = run.communicate(timeout=120)
    print(out, end="")
    print(f"job exit status {run.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
