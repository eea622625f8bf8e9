"""Stops at breakpoint(); the lines typed there print a line, then sleep, a few times."""

import time


def printer(count, pause):
    for i in range(count):
        print("line", i)
        time.sleep(pause)


value = 7
breakpoint()
printer(3, 1.0)
print("value", value)
