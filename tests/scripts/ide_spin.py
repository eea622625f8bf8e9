"""Stops at breakpoint(), then spins in Python for a minute (something for `pause` to break into)."""

import time


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


breakpoint()
spin(60)
print("done", flush=True)
