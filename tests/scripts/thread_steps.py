"""A thread stops at breakpoint() near its end; the main thread lives on until FLAG exists."""

import os
import sys
import threading
import time


def body() -> None:
    value = 7
    breakpoint()
    print(f"thread value {value}", flush=True)


thread = threading.Thread(target=body, name="stepper")
thread.start()
thread.join()
print("thread joined", flush=True)
while not os.path.exists(sys.argv[1]):  # the process outlives the thread
    time.sleep(0.02)
