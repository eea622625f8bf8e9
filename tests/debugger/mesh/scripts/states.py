"""Rank 0 exits 3, rank 1 is killed by SIGKILL, rank 2 stops in pdb, rank 3 runs until FLAG exists."""
import os
import signal
import sys
import time

rank = int(os.environ["RANK"])
if rank == 0:
    sys.exit(3)
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
if rank == 2:
    breakpoint()
    print("rank 2 continued")
if rank == 3:
    flag = sys.argv[1]
    while not os.path.exists(flag):
        time.sleep(0.02)
    print("rank 3 done")
