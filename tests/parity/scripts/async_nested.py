"""pdb parity: asyncio.run nested in a thread that a running loop waits for (asyncio.to_thread)."""
import asyncio


async def inner(n):
    await asyncio.sleep(0)
    breakpoint()
    doubled = n * 2
    await asyncio.sleep(0)
    return doubled


def blocking(n):
    result = asyncio.run(inner(n))
    return result + 1


async def outer():
    first = await asyncio.to_thread(blocking, 1)
    second = await asyncio.to_thread(blocking, 2)
    return first, second


asyncio.run(outer())
