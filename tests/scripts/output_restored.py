"""A worker that prints `argv[1]` MB in one print while stopped, then checks its fd 1 and 2
are back where they were once the session is over, and that no thread reads a capture any
more: its reader is idle (one), kept for the next stop."""
import os
import sys
import threading
import time

READER, PARKED = "meshdbg-output", "meshdbg-output-idle"  # meshdbg.worker.fd_capture's names


def where() -> list[str]:
    return [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)]


def named(name: str) -> int:
    return sum(t.name == name for t in threading.enumerate())


before = where()
breakpoint()
print("x" * (int(sys.argv[1]) * 1024 * 1024))
done = time.monotonic() + 5
while (named(READER) or not named(PARKED)) and time.monotonic() < done:
    time.sleep(0.01)  # the capture's reader tees what is left, then idles
parked = named(PARKED)
print("restored" if where() == before else f"NOT RESTORED {where()} != {before}",
      "and no capture thread" if not named(READER) else "but a capture thread", end="")
print("" if parked == 1 else f" ({parked} parked readers)")
