"""A `meshdbg run` job whose rank 0 stops, then prints while it is stepped; the others print once."""

import os

rank = int(os.environ["RANK"])
if rank == 0:
    breakpoint()
    print("printed while stepped")
    print("after the session")
else:
    print(f"rank {rank} ran")
