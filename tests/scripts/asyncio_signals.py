"""An asyncio program with a signal handler of its loop's (add_signal_handler: the loop learns of
the signal through its wakeup fd) stops at breakpoint() inside a coroutine; once continued, it
prints whether SIGUSR1, sent while it was paused, reached the loop."""

import asyncio
import os
import signal


async def main() -> None:
    got = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, got.set)
    rank = int(os.environ["MESHDBG_RANK"])
    word = "x"
    breakpoint()
    try:
        await asyncio.wait_for(got.wait(), 10)
        print(f"rank {rank} continued; the loop got SIGUSR1", flush=True)
    except TimeoutError:
        print(f"rank {rank} continued; the loop never got SIGUSR1", flush=True)


asyncio.run(main())
