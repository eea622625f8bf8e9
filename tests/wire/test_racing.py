"""first_of / within: the first done wins, the rest are cancelled, a shielded one runs on."""

from __future__ import annotations

import asyncio

from meshdbg.wire.racing import first_of, within


def test_the_first_done_is_returned_and_the_other_cancelled() -> None:
    async def main() -> None:
        fast = asyncio.ensure_future(asyncio.sleep(0, "fast"))
        slow = asyncio.ensure_future(asyncio.Event().wait())
        assert await first_of(fast, slow) == {fast}
        assert fast.result() == "fast"
        await asyncio.gather(slow, return_exceptions=True)
        assert slow.cancelled()

    asyncio.run(main())


def test_a_timeout_returns_nothing_and_cancels_everything() -> None:
    async def main() -> None:
        waits = [asyncio.ensure_future(asyncio.Event().wait()) for _ in range(2)]
        assert await first_of(*waits, timeout=0.01) == set()
        await asyncio.gather(*waits, return_exceptions=True)
        assert all(w.cancelled() for w in waits)
        assert await within(0.01, asyncio.Event().wait()) is False
        assert await within(1.0, asyncio.sleep(0)) is True

    asyncio.run(main())


def test_a_shielded_loser_runs_on() -> None:
    async def main() -> None:
        line: asyncio.Future[str] = asyncio.get_running_loop().create_future()  # like a stdin read under way
        end = asyncio.ensure_future(asyncio.sleep(0, "ended"))
        assert await first_of(asyncio.shield(line), end) == {end}
        assert not line.cancelled()
        line.set_result("next caller's line")

    asyncio.run(main())


def test_cancelling_the_wait_cancels_what_it_waited_for() -> None:
    async def main() -> None:
        pending = asyncio.ensure_future(asyncio.Event().wait())
        waiter = asyncio.ensure_future(first_of(pending))
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.gather(waiter, pending, return_exceptions=True)
        assert pending.cancelled()

    asyncio.run(main())
