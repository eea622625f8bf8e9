"""A program whose stdout is slow to flush while the file FLAG exists (a pipe to a slow
reader): the moment after pdb's `c` in which meshdbg still ends the session lasts.

    python slow_stdout.py FLAG
"""

import os
import sys
import time

flag = sys.argv[1]


class SlowStdout:
    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        return self.stream.write(text)

    def flush(self):
        if os.path.exists(flag):
            time.sleep(0.3)
        self.stream.flush()


sys.stdout = SlowStdout(sys.stdout)
breakpoint()
laps = 0
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    laps += 1
    time.sleep(0.01)
