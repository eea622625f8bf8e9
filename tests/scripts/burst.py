"""THREADS threads (argv[1]) reach breakpoint() at the same moment (a barrier), then finish."""

import sys
import threading

count = int(sys.argv[1])
barrier = threading.Barrier(count)


def body(index: int) -> None:
    barrier.wait()
    breakpoint()


threads = [threading.Thread(target=body, args=(index,), name=f"burst-{index}") for index in range(count)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("done", flush=True)
