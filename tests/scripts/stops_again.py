"""Stops ROUNDS times in THREADS threads at once; after each round, says on stderr which
streams the process keeps parked (meshdbg.worker.parking) as `parked: ID ID ...`. With a GATE
path, each round after the first waits for the file GATE-N (N = the round) to exist first.

    stops_again.py ROUNDS [THREADS] [GATE]
"""

import os
import sys
import threading
import time

from meshdbg.worker import parking

rounds = int(sys.argv[1])
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
gate = sys.argv[3] if len(sys.argv) > 3 else ""


def stop(turn: int) -> None:
    value = turn * 10
    breakpoint()
    value += 1


for turn in range(rounds):
    while gate and turn and not os.path.exists(f"{gate}-{turn}"):
        time.sleep(0.01)
    if threads == 1:
        stop(turn)
    else:
        workers = [threading.Thread(target=stop, args=(turn,)) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    kept = [id(stream) for streams in parking._parked.values() for stream in streams]
    print("parked:", *kept, file=sys.stderr, flush=True)
print("done", file=sys.stderr, flush=True)
