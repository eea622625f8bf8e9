"""Stops at breakpoint(), then runs a long Python loop and a long blocking call to interrupt."""

import sys
import time


def spin() -> int:
    total = 0
    for k in range(10**10):  # a long loop: Ctrl-C stops at its next line
        total += k
    return total


breakpoint()
spin()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)  # blocking in C
print("slept", flush=True)
