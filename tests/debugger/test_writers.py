"""The servicer's writers, on a call whose writes wait until let go.

StreamWriter: a worker stream's writes, from several writers at once, go out one at a time
and in order, with no lock held between them (gRPC refuses a second write under way).
ClientWriter: a control client's writes, cut by one watchdog once a write has waited
CLIENT_STALL_S (made short here), never while writes keep going out, however long.
The same writers on real streams and real stalled clients: tests/faults/test_slow_clients.py."""

from __future__ import annotations

import asyncio

import pytest

from meshdbg.debugger import servicer
from meshdbg.debugger.deadlines import cut_off_text
from meshdbg.debugger.servicer import ClientWriter, StreamWriter
from meshdbg.wire.errors import SessionError


class SlowContext:
    """A call whose writes wait until released, and that records any two under way at once."""

    def __init__(self, takes_s: float = 0.0) -> None:
        self.takes_s = takes_s  # how long each write takes once let go (a slow client that still reads)
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
            await asyncio.sleep(self.takes_s)
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


STALL_S = 0.2


@pytest.fixture
def short_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servicer, "CLIENT_STALL_S", STALL_S)


@pytest.mark.usefixtures("short_stall")
def test_a_client_that_keeps_taking_writes_is_never_cut_however_long_the_writes_go_on() -> None:
    async def body() -> None:
        context = SlowContext(takes_s=STALL_S / 4)
        context.release.set()
        write = ClientWriter(context)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        until = loop.time() + 4 * STALL_S  # the watchdog comes due three times or more meanwhile
        sent = 0
        while loop.time() < until:
            await write(str(sent))  # type: ignore[arg-type]
            sent += 1
        assert not write.cut and len(context.written) == sent
        await write.end()

    asyncio.run(body())


@pytest.mark.usefixtures("short_stall")
def test_a_stalled_write_is_cut_and_so_is_every_write_waiting_behind_it() -> None:
    async def body() -> None:
        context = SlowContext()  # never let go: a client that stopped reading
        write = ClientWriter(context)  # type: ignore[arg-type]
        stalled, behind = (asyncio.create_task(write(m)) for m in ("a", "b"))  # type: ignore[arg-type]
        started = asyncio.get_running_loop().time()
        for task in (stalled, behind):
            with pytest.raises(SessionError, match="cut off"):
                await asyncio.wait_for(task, 10 * STALL_S)
        assert STALL_S <= asyncio.get_running_loop().time() - started < 10 * STALL_S
        assert write.cut == cut_off_text() and context.written == [] and context.under_way == 0

    asyncio.run(body())


@pytest.mark.usefixtures("short_stall")
def test_a_write_cancelled_from_outside_is_cancelled_not_cut() -> None:
    async def body() -> None:
        context = SlowContext()
        write = ClientWriter(context)  # type: ignore[arg-type]
        task = asyncio.create_task(write("a"))  # type: ignore[arg-type]
        while context.under_way == 0:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not write.cut
        context.release.set()
        await asyncio.wait_for(write("b"), 10 * STALL_S)  # type: ignore[arg-type]
        assert context.written == ["b"] and not write.cut

    asyncio.run(body())
