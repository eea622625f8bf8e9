"""A rank for bench_stacks.py: rank 0 spins in Python (busy); every other rank waits a few calls
deep, with one extra thread waiting too."""

import os
import threading

forever = threading.Event()


def wait_here():
    forever.wait()


def layer(depth):
    if depth == 0:
        wait_here()
    layer(depth - 1)


def spin():
    while True:
        pass


threading.Thread(target=forever.wait, name="prefetch", daemon=True).start()
if os.environ["RANK"] == "0":
    spin()
layer(8)
