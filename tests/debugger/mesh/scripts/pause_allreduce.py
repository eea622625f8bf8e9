"""A gloo job whose rank 1 stops in pdb before all_reduce while rank 0 waits in it, for longer
than the process group's timeout (2 s): meshdbg extends the timeout during the pause."""

import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

TIMEOUT = datetime.timedelta(seconds=2)
dist.init_process_group("gloo", timeout=TIMEOUT)  # RANK, WORLD_SIZE, MASTER_* come from meshdbg run
rank = dist.get_rank()
backend = dist.group.WORLD._get_backend(torch.device("cpu"))


def wait_until(condition, what: str, limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"rank {rank}: the timeout was never {what}")
        time.sleep(0.01)


def timeout_s() -> float:
    return backend.options._timeout.total_seconds()


def step() -> None:
    t = torch.ones(1) * (rank + 1)
    if rank == 1:
        breakpoint()
    else:
        wait_until(lambda: timeout_s() > TIMEOUT.total_seconds(), "extended")  # the pause has reached this rank
    dist.all_reduce(t)
    print(f"rank {rank} sum {t.item():g}", flush=True)


step()
wait_until(lambda: timeout_s() == TIMEOUT.total_seconds(), "restored")
print(f"rank {rank} timeout restored", flush=True)
dist.destroy_process_group()
# Leave without interpreter finalization: under load, gloo's worker thread can still hold the
# last all_reduce's tensors when Python finalizes, and it aborts the process when it frees them
# ("terminate called without an active exception", seen in CI; a torch teardown race, not the pause).
sys.stdout.flush()
os._exit(0)
