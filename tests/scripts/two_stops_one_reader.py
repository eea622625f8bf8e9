"""A worker that stops twice: the capture of its second stop is read by the thread that read
the first one's, idle in between (meshdbg.worker.fd_capture); it says so on stdout."""
import threading
import time

READER, PARKED = "meshdbg-output", "meshdbg-output-idle"  # meshdbg.worker.fd_capture's names


def parked_readers() -> list[int]:
    """The idents of the parked readers, once no thread reads a capture (within 5 s)."""
    done = time.monotonic() + 5
    while time.monotonic() < done:
        threads = threading.enumerate()
        if not any(t.name == READER for t in threads) and any(t.name == PARKED for t in threads):
            break
        time.sleep(0.01)
    return [t.ident for t in threading.enumerate() if t.name == PARKED]


breakpoint()
first = parked_readers()
breakpoint()
second = parked_readers()
print("one reader for both stops" if len(first) == 1 and first == second else f"NOT REUSED: {first} then {second}")
