"""Requests waiting for their answers, matched by id: the one helper every stream owner uses.

A stream that carries many requests at once (a session's completions, an attach's
completions, a worker's actor calls, the fork server's spawns) numbers each request, sends
it, and waits for the answer that carries the same number. When the stream ends, everything
still waiting must be released, and so must anything asked afterwards, or a caller hangs.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from typing import Awaitable, Callable, Generic, TypeVar

T = TypeVar("T")


class PendingRequests(Generic[T]):
    """Futures by request id; `close` settles all of them, and every later request, at once."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[T]] = {}
        self._closed: tuple[T | None, BaseException | None] | None = None

    async def request(self, send: Callable[[int], Awaitable[object] | object]) -> T:
        """Number a request, `send(id)` it, and return its answer (or the outcome `close` set).

        An exception from `send` propagates; the request is forgotten either way.
        """
        if self._closed is not None:
            return self._settled()
        request_id = next(self._ids)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            sent = send(request_id)
            if inspect.isawaitable(sent):
                await sent
            return await future
        finally:
            self._waiting.pop(request_id, None)

    def answer(self, request_id: int, value: T) -> None:
        """The answer to one request; one nobody waits for any more is dropped."""
        future = self._waiting.get(request_id)
        if future is not None and not future.done():
            future.set_result(value)

    def close(self, value: T | None = None, error: BaseException | None = None) -> None:
        """The stream is over: every waiting and later request gets `value`, or raises `error`."""
        if self._closed is None:
            self._closed = (value, error)
        self.settle(value, error)

    def settle(self, value: T | None = None, error: BaseException | None = None) -> None:
        """Every waiting request gets `value` (or raises `error`); later ones are asked as usual
        (a stream that went silent and may come back)."""
        for future in self._waiting.values():
            if not future.done():
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(value)  # type: ignore[arg-type]

    def _settled(self) -> T:
        value, error = self._closed  # type: ignore[misc]
        if error is not None:
            raise error
        return value  # type: ignore[return-value]
