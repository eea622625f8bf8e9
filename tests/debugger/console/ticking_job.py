"""A `meshdbg run` job whose rank 0 stops while a thread of it prints a numbered tick every 50 ms,
until the stop ends."""

import os
import threading
import time

ticking = True


def tick() -> None:
    count = 0
    while ticking:
        count += 1
        print(f"tick {count}", flush=True)
        time.sleep(0.05)


if int(os.environ["RANK"]) == 0:
    ticker = threading.Thread(target=tick)
    ticker.start()
    breakpoint()
    ticking = False
    ticker.join()
