"""Stops at breakpoint() with a few values to print, then reports that it continued."""

import os

rank = int(os.environ["MESHDBG_RANK"])
word = "x"
breakpoint()
print(f"rank {rank} continued", flush=True)
