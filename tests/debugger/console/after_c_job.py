"""A job for `meshdbg run` console tests: rank 0 stops once, then runs on; the others end at once.

After `c` no rank is paused, so the console closes until the next stop. Rank 0 runs Python
(an interrupt stops it at once) until `block` is set from pdb; then it waits in C, where an
interrupt cannot reach it.
"""

import os
import threading
import time

block = False
if int(os.environ["RANK"]) == 0:
    breakpoint()
    deadline = time.monotonic() + 60
    while not block and time.monotonic() < deadline:
        time.sleep(0.05)
    threading.Event().wait(60)
