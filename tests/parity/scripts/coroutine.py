"""pdb parity: coroutine."""
import asyncio

async def job(n):
    await asyncio.sleep(0)
    return n + 1

async def main():
    breakpoint()
    result = await job(1)
    return result

asyncio.run(main())
