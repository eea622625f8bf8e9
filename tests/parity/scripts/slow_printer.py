"""Stops at breakpoint(); the lines typed there print a line, then sleep, a few times. The
program itself does so after the stop, with the pause its argument gives (default 0.5 s)."""

import sys
import time


def printer(count, pause):
    for i in range(count):
        print("line", i)
        time.sleep(pause)


pause = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
breakpoint()
printer(3, pause)
print("done")
