"""Stops at breakpoint() in a loop; a line that `b` can target after `continue`."""

import os

rank = int(os.environ["MESHDBG_RANK"])
total = 0
breakpoint()
for step in range(3):
    total += step  # target of `b loop.py:10`
print(f"rank {rank} total {total}", flush=True)
