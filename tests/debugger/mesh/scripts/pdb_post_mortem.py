"""The classic `except: pdb.post_mortem()` in each rank; the rank goes on after it."""
import os
import pdb


def step(rank):
    scale = rank + 2
    raise RuntimeError(f"rank {rank} diverged at scale {scale}")


rank = int(os.environ.get("MESHDBG_RANK", "0"))
try:
    step(rank)
except RuntimeError:
    pdb.post_mortem()
print("rank", rank, "went on", flush=True)
