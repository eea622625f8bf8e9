"""The `meshdbg run` job a console belongs to: what lets the console end it.

The launcher owns the mesh; the console only asks. `stop(why)` sets `stopping`, which
`meshdbg run` waits on, and `ended` is set by the launcher once the job is over, which closes
the console (the terminal restored) wherever it is. SIGINT and SIGTERM stop the job
(`take_signals`), except while a console is open: it takes SIGINT over and gives it back.
A console that closed because every rank runs again after `c` leaves the rank it let run as
`following`: the first Ctrl-C after that interrupts that rank (as Ctrl-C after `c` in local
pdb), saying that a second one stops the job.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from meshdbg.wire.errors import MeshdbgError

SECOND_CTRL_C_S = 3.0  # a second Ctrl-C at meshdbg> this soon after the first stops the job


@dataclass
class Job:
    """A stop request from the console and the job's end, as two events."""

    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    why: str = ""
    console_open: bool = False  # a console is on the terminal (the launcher lets it close itself)
    console_shown: bool = False  # a console has opened on the terminal in this job (its end is said then)
    closed_by_user: bool = False  # the last console was closed with quit or Ctrl-D, not left idle
    showing: Callable[[], int | None] = lambda: None  # the rank whose session the open console shows
    left: Callable[[int], None] = lambda rank: None  # the console stopped showing this rank's session
    following: int | None = None  # the rank the closed console let run: the next Ctrl-C interrupts it
    interrupt_rank: Callable[[int], Awaitable[list[int]]] | None = None  # ask a rank to stop in pdb (the ranks asked)
    _last_ctrl_c: float = float("-inf")
    _asking: asyncio.Task[None] | None = None  # the interrupt a Ctrl-C asked for, under way

    def stop(self, why: str) -> None:
        """Ask the launcher to stop every rank (the first reason given is the one reported)."""
        self.why = self.why or why
        self.stopping.set()

    def take_signals(self) -> None:
        """SIGINT and SIGTERM stop the job (from the running loop; replaces a console's SIGINT)."""
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self.on_sigint)
        loop.add_signal_handler(signal.SIGTERM, self.stop, "terminated")

    def on_sigint(self) -> None:
        """Ctrl-C with no console open: first the rank the console let run, if it still runs
        (it comes back to the console at its stop), else the whole job."""
        rank, self.following = self.following, None
        if rank is None or self.interrupt_rank is None:
            self.stop("interrupted")
            return
        self._asking = asyncio.get_running_loop().create_task(self._interrupt_or_stop(self.interrupt_rank(rank), rank))

    async def _interrupt_or_stop(self, asking: Awaitable[list[int]], rank: int) -> None:
        """Say that `rank` is being interrupted, or stop the job if it was not asked (it no longer runs)."""
        try:
            asked = await asking
        except MeshdbgError:
            asked = []
        if not asked:
            self.stop("interrupted")
            return
        print(f"meshdbg: interrupting rank {rank}, the rank you let run; Ctrl-C again stops the whole job",
              file=sys.stderr, flush=True)

    def ctrl_c(self) -> str | None:
        """Ctrl-C on an empty `meshdbg>`: the first explains (the text returned), a second one
        within SECOND_CTRL_C_S stops the job (None), unless a line was entered in between
        (`line_entered`)."""
        now = time.monotonic()
        if now - self._last_ctrl_c <= SECOND_CTRL_C_S:
            self.stop("stopped by Ctrl-C at meshdbg>")
            return None
        self._last_ctrl_c = now
        return (f"Ctrl-C again within {SECOND_CTRL_C_S:.0f} s stops the whole job (so does `stop`); "
                f"quit or Ctrl-D closes the console until the next stop")

    def line_entered(self) -> None:
        """The person entered a line at the console: the next Ctrl-C is a first one again. (Ctrl-C,
        then a command, then Ctrl-C to clear the prompt within 3 s used to stop the whole job.)"""
        self._last_ctrl_c = float("-inf")

    def farewell(self, sessions: str, busy: int) -> str:
        """What closing the console says (`sessions`: "1 session", "3 sessions", of which `busy`
        are running a command: paused once it ends); the launcher opens it again
        at the next new stop only."""
        self.closed_by_user = True
        verb = "stays" if sessions.startswith("1 ") else "stay"
        once = f" ({busy} once {'its' if busy == 1 else 'their'} command ends)" if busy else ""
        return (f"console closed until the next stop; {sessions} {verb} paused{once}, the job runs on "
                f"(Ctrl-C here stops it; meshdbg attach opens a console from another terminal)")
