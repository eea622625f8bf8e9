"""pdb parity: stepping through `async with` and `async for` over an async generator."""
import asyncio


class Guard:
    async def __aenter__(self):
        await asyncio.sleep(0)
        return "guarded"

    async def __aexit__(self, *exc):
        await asyncio.sleep(0)
        return False


async def ticks(n):
    for k in range(n):
        await asyncio.sleep(0)
        yield k


async def main():
    breakpoint()
    async with Guard() as g:
        total = 0
        async for k in ticks(3):
            total += k
    return g, total


asyncio.run(main())
