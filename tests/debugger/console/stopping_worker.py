"""A worker for the console tests: stops at breakpoint(), then does what argv[1] says.

    exit   (default) return after the breakpoint
    again  stop at a second breakpoint
    spin   run until interrupted (a rank that is running when the console presses Ctrl-C)
"""

import os
import sys
import time

rank = int(os.environ["MESHDBG_RANK"])
loss_scale = 0.5 * (rank + 1)
shared_note = "the same on every rank"
then = sys.argv[1] if len(sys.argv) > 1 else "exit"
breakpoint()
if then == "again":
    second_stop = True
    breakpoint()
elif then == "loop":  # a loop whose body reaches breakpoint() again (`n` walks onto it)
    for step in range(3):
        breakpoint()
elif then == "long":  # a long Python loop, then a 4 s sleep (Ctrl-C while `n` runs over them)
    total = 0
    for k in range(10**10):  # a long Python loop
        total += k
    time.sleep(4)  # blocking in C
    slept = True
elif then.startswith("gate:"):  # gate:PATH: stop again once the file PATH exists (the test says when)
    gate, deadline = then.removeprefix("gate:"), time.monotonic() + 50
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)
    breakpoint()
elif then == "spin":
    deadline = time.monotonic() + 50
    while time.monotonic() < deadline:
        time.sleep(0.01)
elif then.startswith("fifo:"):  # fifo:PATH: block in C (open) until the test opens the FIFO for writing
    with open(then.removeprefix("fifo:"), "rb") as fifo:
        unblocked = fifo.read()
