"""PendingRequests: answers matched by id, and nobody left waiting once the stream ends."""

from __future__ import annotations

import asyncio

import pytest

from meshdbg.wire.pending import PendingRequests
from meshdbg.wire.errors import MeshError


def test_answers_reach_the_request_with_their_id() -> None:
    async def scenario() -> list[str]:
        pending: PendingRequests[str] = PendingRequests()
        sent: list[int] = []
        first = asyncio.ensure_future(pending.request(sent.append))
        second = asyncio.ensure_future(pending.request(sent.append))
        while len(sent) < 2:
            await asyncio.sleep(0)
        pending.answer(sent[1], "two")
        pending.answer(sent[0], "one")
        pending.answer(99, "nobody asked")
        return [await first, await second]

    assert asyncio.run(scenario()) == ["one", "two"]


def test_close_releases_waiting_and_later_requests() -> None:
    async def scenario() -> tuple[object, object]:
        pending: PendingRequests[list[str]] = PendingRequests()
        waiting = asyncio.ensure_future(pending.request(lambda request_id: None))
        await asyncio.sleep(0)
        pending.close([])
        return await asyncio.wait_for(waiting, 1), await asyncio.wait_for(pending.request(lambda request_id: None), 1)

    assert asyncio.run(scenario()) == ([], [])


def test_close_with_an_error_raises_it_everywhere() -> None:
    async def scenario() -> None:
        pending: PendingRequests[int] = PendingRequests()
        waiting = asyncio.ensure_future(pending.request(lambda request_id: None))
        await asyncio.sleep(0)
        pending.close(error=MeshError("rank 3 went away"))
        with pytest.raises(MeshError, match="rank 3"):
            await asyncio.wait_for(waiting, 1)
        with pytest.raises(MeshError, match="rank 3"):
            await asyncio.wait_for(pending.request(lambda request_id: None), 1)

    asyncio.run(scenario())


def test_a_failed_send_is_forgotten() -> None:
    async def scenario() -> None:
        pending: PendingRequests[int] = PendingRequests()

        def broken(request_id: int) -> None:
            raise MeshError("cannot reach it")

        with pytest.raises(MeshError):
            await pending.request(broken)
        assert pending._waiting == {}

    asyncio.run(scenario())
