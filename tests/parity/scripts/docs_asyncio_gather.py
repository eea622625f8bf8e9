"""asyncio's documentation, `asyncio.gather`: three tasks that switch at each await (the sleep
shortened to 0 and the prints sent to stderr); pdb stops in task A."""
import asyncio
import sys

async def factorial(name, number):
    f = 1
    for i in range(2, number + 1):
        if name == "A":
            breakpoint()
        print(f"Task {name}: Compute factorial({number}), currently i={i}...", file=sys.stderr)
        await asyncio.sleep(0)
        f *= i
    print(f"Task {name}: factorial({number}) = {f}", file=sys.stderr)
    return f

async def main():
    # Schedule three calls *concurrently*:
    L = await asyncio.gather(
        factorial("A", 2),
        factorial("B", 3),
        factorial("C", 4),
    )
    print(L, file=sys.stderr)

asyncio.run(main())
