"""Waiting for the first of several awaitables, the rest cancelled: the one helper for every race.

A rank that registers or dies, a command's answer or Ctrl-C, a typed line or the session's
end, a stop or the process gone, a host's ranks idle or its agent gone: each waits until the
first of two (or more) things happens and must not leave the others running. The central side
and the host agent both import it, so it lives in the layer both may import. Pure asyncio.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable


async def first_of(*awaitables: Awaitable[Any], timeout: float | None = None) -> set[asyncio.Future[Any]]:
    """Wait until the first of `awaitables` is done, or `timeout` seconds; the futures that
    were done by then (none on a timeout). Those not done are cancelled, on every way out
    (the caller's own cancellation too): wrap one in `asyncio.shield` to keep it running.

    A future or task given is the one watched, so a caller that keeps it reads its result
    (`task in done`, then `task.result()`)."""
    futures: list[asyncio.Future[Any]] = [asyncio.ensure_future(a) for a in awaitables]
    try:
        done, _ = await asyncio.wait(futures, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for future in futures:
            if not future.done():
                future.cancel()
    return done


async def within(timeout: float, *awaitables: Awaitable[object]) -> bool:
    """Whether the first of `awaitables` is done within `timeout` seconds (the rest are cancelled)."""
    return bool(await first_of(*awaitables, timeout=timeout))
