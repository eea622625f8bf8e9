"""The `meshdbg run` job a console belongs to: what lets the console end it.

The launcher owns the mesh; the console only asks. `stop(why)` sets `stopping`, which
`meshdbg run` waits on beside SIGINT and SIGTERM, and `ended` is set by the launcher once the
job is over, which closes the console (the terminal restored) wherever it is.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class Job:
    """A stop request from the console and the job's end, as two events."""

    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    why: str = ""
    console_open: bool = False  # a console is on the terminal (the launcher lets it close itself)
    closed_by_user: bool = False  # the last console was closed with quit or Ctrl-D, not left idle

    def stop(self, why: str) -> None:
        """Ask the launcher to stop every rank (the first reason given is the one reported)."""
        self.why = self.why or why
        self.stopping.set()
