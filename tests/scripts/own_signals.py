"""Stops at breakpoint() in a program with signal handlers of its own, then reports that it continued.

SIGUSR1 prints a line; SIGUSR2 raises KeyboardInterrupt; and once the file named by the first
argument exists, a thread of the program raises KeyboardInterrupt into the main thread
(PyThreadState_SetAsyncExc, as thread-based timeout libraries do).
"""

import ctypes
import os
import signal
import sys
import threading
import time


def report(signum, frame):
    print(f"handled {signal.Signals(signum).name}", flush=True)


def interrupt(signum, frame):
    raise KeyboardInterrupt


def interrupt_main_when(path, main):
    while not os.path.exists(path):
        time.sleep(0.05)
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main), ctypes.py_object(KeyboardInterrupt))
    print("raised into the main thread", flush=True)


signal.signal(signal.SIGUSR1, report)
signal.signal(signal.SIGUSR2, interrupt)
threading.Thread(target=interrupt_main_when, args=(sys.argv[1], threading.get_ident()), daemon=True).start()
rank = int(os.environ["MESHDBG_RANK"])
word = "x"
breakpoint()
print(f"rank {rank} continued", flush=True)
