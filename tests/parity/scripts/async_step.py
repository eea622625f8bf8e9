"""pdb parity: stepping over awaits inside asyncio tasks (the stop lands in another task)."""
import asyncio


async def worker(name, rounds):
    total = 0
    for k in range(rounds):
        await asyncio.sleep(0)
        total += k
    return name, total


async def main():
    first = asyncio.create_task(worker("a", 2))
    breakpoint()
    await asyncio.sleep(0)
    second = await worker("b", 2)
    done = await first
    return done, second


asyncio.run(main())
