"""pdb parity: `n` over awaits inside asyncio tasks, while other tasks run between the steps."""
import asyncio


async def worker(name, rounds):
    total = 0
    for k in range(rounds):
        if name == "a" and k == 0:
            breakpoint()
        await asyncio.sleep(0)
        total += k
    return name, total


async def main():
    results = await asyncio.gather(worker("a", 3), worker("b", 3))
    return results


asyncio.run(main())
