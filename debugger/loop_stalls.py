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

TICK_S = 0.5  # how often the loop is looked at while a stream is open
# A timer this late: the client stalled. Far below CLIENT_STALL_S, as the server's count of a
# write that waits may begin before the client stops (it was slow to take a large output):
# a client stopped ~3 s was cut (measured, tests/faults/test_slow_clients.py). A client whose
# server stalled runs its timers on time.
STALL_S = 1.0


class LoopStalls:
    """How late a ticking timer of the running loop came, while anyone watches."""

    def __init__(self) -> None:
        self._watchers = 0
        self._ticker: asyncio.Task[None] | None = None
        self._ticked = 0.0  # (the loop's clock) when the ticker last ran, or was made
        self._last_stall_end = float("-inf")  # (the loop's clock) when the last stall of STALL_S ended

    @contextlib.contextmanager
    def watching(self) -> Iterator[float]:
        """While inside, the loop's stalls are noted; gives the loop's time at the start."""
        loop = asyncio.get_running_loop()
        self._watchers += 1
        if self._ticker is None:
            # Counted from now, not from the ticker's first run: a client stopped before that
            # (the moment its stream began) stalled too.
            self._ticked = loop.time()
            self._ticker = loop.create_task(self._tick())
        try:
            yield loop.time()
        finally:
            self._watchers -= 1
            if not self._watchers and self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None

    def stalled_since(self, since: float) -> bool:
        """Whether the loop stalled STALL_S or more after `since` (the loop's clock), the
        stall that the ticker has not run since (it comes late, after this is asked) included."""
        overdue = asyncio.get_running_loop().time() - self._ticked - TICK_S >= STALL_S
        return overdue or self._last_stall_end > since

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(TICK_S)
            now = loop.time()
            if now - self._ticked - TICK_S >= STALL_S:
                self._last_stall_end = now
            self._ticked = now
