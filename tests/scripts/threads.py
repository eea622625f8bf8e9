"""Two threads of one worker stop at the same time."""

import threading

barrier = threading.Barrier(2)


def body(index: int) -> None:
    barrier.wait()
    mine = index * 100
    breakpoint()
    print(f"thread {index} done {mine}", flush=True)


threads = [threading.Thread(target=body, args=(i,), name=f"worker-{i}") for i in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("all threads done", flush=True)
