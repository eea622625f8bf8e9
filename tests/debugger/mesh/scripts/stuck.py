"""A mesh whose ranks are each somewhere else: for `meshdbg stacks`.

rank 0 waits for a peer (and runs a "loader" thread), rank 1 loads a batch, rank 2 spins in
Python, rank 3 is stuck in a catastrophic regex holding the GIL, rank 4 stops in pdb, any
further rank waits for a peer too.
"""

import os
import re
import threading
import time

RANK = int(os.environ["RANK"])
forever = threading.Event()


def loader_loop():
    forever.wait()


def wait_for_peer():
    forever.wait()


def load_batch():
    forever.wait()


def spin():
    total = 0
    while True:
        total += 1


def match_forever():
    re.match(r"(a+)+$", "a" * 64 + "b")  # exponential backtracking in C, GIL held


def stop_here():
    breakpoint()
    forever.wait()


def main():
    if RANK == 0:
        threading.Thread(target=loader_loop, name="loader", daemon=True).start()
    {1: load_batch, 2: spin, 3: match_forever, 4: stop_here}.get(RANK, wait_for_peer)()


main()
