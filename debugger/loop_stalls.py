"""Whether this process's event loop stalled lately: a client's own stall, told from its server's.

A control client's stream that breaks while its server still answers broke one of two ways.
The server cut the client off for taking no output for CLIENT_STALL_S: the client was stopped
(Ctrl-Z, SIGSTOP) or its loop blocked (a frozen terminal's write), and either leaves a gap in
its own loop. Or the server itself did not answer for a while (SIGSTOPped, a loaded machine):
the client's keepalive gave up on the connection, then the server came back. Without a look
at its own loop the client took the second for the first and blamed itself ("this client took
no output for 5 s and was cut off"), where its server had stalled. So while such a stream is
open, a timer notes how late it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Iterator

from meshdbg.debugger.deadlines import CLIENT_STALL_S

TICK_S = 0.5  # how often the loop is looked at while a stream is open
STALL_S = CLIENT_STALL_S / 2  # a gap this long: the client stalled (the server cuts after CLIENT_STALL_S)


class LoopStalls:
    """How late a ticking timer of the running loop came, while anyone watches."""

    def __init__(self) -> None:
        self._watchers = 0
        self._ticker: asyncio.Task[None] | None = None
        self._last_stall_end = float("-inf")  # (the loop's clock) when the last stall of STALL_S ended

    @contextlib.contextmanager
    def watching(self) -> Iterator[float]:
        """While inside, the loop's stalls are noted; gives the loop's time at the start."""
        loop = asyncio.get_running_loop()
        self._watchers += 1
        if self._ticker is None:
            self._ticker = loop.create_task(self._tick())
        try:
            yield loop.time()
        finally:
            self._watchers -= 1
            if not self._watchers and self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None

    def stalled_since(self, since: float) -> bool:
        """Whether the loop stalled STALL_S or more after `since` (the loop's clock)."""
        return self._last_stall_end > since

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(TICK_S)
            now = loop.time()
            if now - before - TICK_S >= STALL_S:
                self._last_stall_end = now
