"""breakpoint() reached again while pdb steps: in a loop, a generator, a thread and a coroutine.

argv[1] picks the case; every case stops at a first breakpoint() and then reaches another
breakpoint() line that stepping (n, r, until, c) walks onto.
"""

import asyncio
import sys
import threading


def work(step: int) -> int:
    value = step * 2
    breakpoint()  # loop
    return value


def produce():
    for item in range(3):
        breakpoint()  # generator
        yield item


async def task(step: int) -> int:
    await asyncio.sleep(0)
    breakpoint()  # coroutine
    return step


async def tasks() -> None:
    for step in range(2):
        await task(step)


def in_thread() -> None:
    for step in range(2):
        work(step)


case = sys.argv[1]
if case == "loop":
    total = sum(work(step) for step in range(3))
elif case == "generator":
    total = sum(produce())
elif case == "coroutine":
    asyncio.run(tasks())
    total = 1
else:
    thread = threading.Thread(target=in_thread, name="stepper")
    thread.start()
    thread.join()
    total = 2
print(f"total {total}", file=sys.stderr)
