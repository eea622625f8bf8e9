"""StreamWriter: a worker stream's writes, from several writers at once, go out one at a time
and in order, with no lock held between them (gRPC refuses a second write under way)."""

from __future__ import annotations

import asyncio

import pytest

from meshdbg.debugger.servicer import StreamWriter
from meshdbg.wire.errors import SessionError


class SlowContext:
    """A call whose writes wait until released, and that records any two under way at once."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.under_way = 0
        self.overlapped = False
        self.release = asyncio.Event()
        self.ended = False

    def done(self) -> bool:
        return self.ended

    async def write(self, message: str) -> None:
        self.under_way += 1
        self.overlapped |= self.under_way > 1
        try:
            await self.release.wait()
            self.written.append(message)
        finally:
            self.under_way -= 1


def test_writes_at_once_go_out_one_at_a_time_in_order_and_a_cancelled_one_is_skipped() -> None:
    async def body() -> None:
        context = SlowContext()
        write = StreamWriter(context, "gone")  # type: ignore[arg-type]
        first, cancelled, last = (asyncio.create_task(write(m)) for m in ("a", "b", "c"))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        cancelled.cancel()
        context.release.set()
        await asyncio.wait_for(asyncio.gather(first, last), 5)
        assert context.written == ["a", "c"] and not context.overlapped and cancelled.cancelled()
        context.ended = True
        with pytest.raises(SessionError, match="gone"):
            await write("d")  # type: ignore[arg-type]

    asyncio.run(body())
