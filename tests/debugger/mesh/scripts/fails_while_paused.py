"""Rank 0 stops at a breakpoint; rank 1 exits 3 once the file argv[1] exists (the test makes it
while rank 0 is paused); rank 2 runs until it is stopped. With argv[2] `again`, rank 0 stops at
a second breakpoint after the first, and rank 2 stops at one before it runs on."""
import os
import sys
import time

rank = int(os.environ["RANK"])
again = sys.argv[2:] == ["again"]
if rank == 0:
    value = "kept"
    breakpoint()
    if again:
        value = "kept again"
        breakpoint()
    print("rank 0 continued", flush=True)
elif rank == 1:
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.02)
    sys.exit(3)
else:
    if again:
        breakpoint()
    while True:
        time.sleep(0.05)
