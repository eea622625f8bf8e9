"""A program with no breakpoint of its own: `meshdbg run -m pdb` stops at its first line."""
import os
import sys

rank = int(os.environ.get("MESHDBG_RANK", "0"))
print("rank", rank, "ran with", sys.argv[1:], flush=True)
