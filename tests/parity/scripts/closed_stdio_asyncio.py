"""With `close`: the program closes its stdout and stderr (as a daemon does) and then runs an
asyncio loop, whose self-pipe socket pair takes the numbers 1 and 2 (with `uvloop`: uvloop's
loop, whose eventfd and epoll take them); without, it keeps them. Stepping over an `await` must
go the same either way (the output capture must not put its pipes over the loop's own)."""

import asyncio
import os
import sys


async def main() -> int:
    x = 1
    breakpoint()
    await asyncio.sleep(0.01)
    x = 2
    await asyncio.sleep(0.01)
    x = 3
    return x


if sys.argv[1] == "close":
    os.close(1)
    os.close(2)
    sys.stdout = sys.stderr = None
if sys.argv[2:] == ["uvloop"]:
    import uvloop

    uvloop.run(main())
else:
    asyncio.run(main())
