"""A job for `meshdbg run` console tests: rank 0 stops in pdb, the other ranks keep running.

    python run_job.py [running-seconds]

Rank 0 stops at breakpoint() (twice, a step apart); every other rank sleeps in a loop for
running-seconds (default 50), so it is still running while rank 0 is debugged.
"""

import os
import sys
import time

rank = int(os.environ["RANK"])
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 50.0


def step(number: int) -> int:
    total = number * 10
    return total + rank


if rank == 0:
    for number in range(2):
        breakpoint()
        result = step(number)
    print(f"rank 0 done {result}", flush=True)
else:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.02)
    print(f"rank {rank} done", flush=True)
