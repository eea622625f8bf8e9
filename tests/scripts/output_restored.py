"""A worker that prints `argv[1]` MB in one print while stopped, then checks its fd 1 and 2
are back where they were and no capture thread is left once the session is over."""
import os
import sys
import threading
import time


def where() -> list[str]:
    return [os.readlink(f"/proc/self/fd/{fd}") for fd in (1, 2)]


before = where()
breakpoint()
print("x" * (int(sys.argv[1]) * 1024 * 1024))
done = time.monotonic() + 5
while any(t.name == "meshdbg-output" for t in threading.enumerate()) and time.monotonic() < done:
    time.sleep(0.01)  # the capture's reader drains what is left, then ends
print("restored" if where() == before else f"NOT RESTORED {where()} != {before}",
      "and no capture thread" if not any(t.name == "meshdbg-output" for t in threading.enumerate()) else "but a capture thread")
