"""Stops at breakpoint() after every 2 ms of running, for as long as it is let run."""

import time

laps = 0
while True:
    laps += 1
    until = time.monotonic() + 0.002
    while time.monotonic() < until:
        pass
    breakpoint()
