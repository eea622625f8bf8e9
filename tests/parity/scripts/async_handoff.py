"""pdb parity: two asyncio tasks reach breakpoint() in turn; `n` over an await lands in the other."""
import asyncio


async def worker(name):
    total = 0
    for k in range(2):
        breakpoint()
        await asyncio.sleep(0)
        total += k
    return name, total


async def main():
    return await asyncio.gather(worker("a"), worker("b"))


asyncio.run(main())
