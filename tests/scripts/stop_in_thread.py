"""Stops at breakpoint() in the thread named by argv[1]: `main`, or a thread of its own."""

import sys
import threading


def body() -> None:
    value = 7
    breakpoint()
    print(f"done {value}", flush=True)


if sys.argv[1] == "main":
    body()
else:
    thread = threading.Thread(target=body, name="flooder")
    thread.start()
    thread.join()
