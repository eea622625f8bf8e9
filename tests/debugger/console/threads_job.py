"""A job for `meshdbg run` console tests of threads and logs: rank 0 stops in two threads, rank 1 logs.

    python threads_job.py

Rank 0's main thread stops at breakpoint(), and so does its thread "sidekick" once the main
one has stopped; rank 1 prints a numbered line every 0.2 s for a minute, so its log lines
arrive while someone types at the console.
"""

import os
import threading
import time

rank = int(os.environ["RANK"])
main_stopped = threading.Event()


def sidekick() -> None:
    main_stopped.wait(30)
    time.sleep(0.5)
    where = "sidekick"
    breakpoint()
    print(f"rank {rank} {where} done", flush=True)


if rank == 0:
    thread = threading.Thread(target=sidekick, name="sidekick")
    thread.start()
    main_stopped.set()
    where = "main"
    breakpoint()
    thread.join()
    print(f"rank {rank} main done", flush=True)
else:
    for tick in range(300):
        print(f"rank {rank} tick {tick}", flush=True)
        time.sleep(0.2)
