"""A program for `run --dap` output tests: each rank prints to stdout and stderr while it runs,
until the file named by its first argument exists; then it stops in pdb before two more prints.

A second argument names a file whose appearance makes rank 0 write 64 MB of lines to stdout
as fast as it can, then `flood over` to stderr.
"""

import os
import sys
import time

flag = sys.argv[1]
flood = sys.argv[2] if len(sys.argv) > 2 and os.environ.get("RANK") == "0" else None
beat = 0
while not os.path.exists(flag):
    if flood is not None and os.path.exists(flood):
        line = "x" * 1023 + "\n"
        for _ in range(64 * 1024):
            sys.stdout.write(line)
        sys.stdout.flush()
        print("flood over", file=sys.stderr, flush=True)
        flood = None
    print(f"working {beat}", flush=True)
    print(f"warning {beat}", file=sys.stderr, flush=True)
    beat += 1
    time.sleep(0.05)
breakpoint()
print("after the stop", flush=True)
print("done", flush=True)
