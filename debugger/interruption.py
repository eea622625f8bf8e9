"""`interrupt`: break the selected ranks into pdb, and say which could not (yet), and why.

The server asks each selected running rank's agent to stop its main thread. That succeeds at
the thread's next Python line: a rank blocked in C (a sleep, a socket, a collective) stops
only when the call returns. So the request is followed, for up to BREAK_IN_S, on the watch
stream: ranks that stopped are reported as such, the others as not stopped yet, with the
reason; selected ranks that were not asked are named with theirs (already stopped, exited,
still starting). Shared by `meshdbg interrupt` and the console's `interrupt`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.format import where
from meshdbg.debugger.selection import Placed, parse_selection, ranks_text
from meshdbg.debugger.views import SessionView
from meshdbg.wire.vocabulary import State, WatchKind

BREAK_IN_S = 1.0  # how long an interrupt waits for the ranks asked to stop before reporting

NOT_YET = ("not stopped yet: outside Python code (C code, a blocking call or a collective), stops at its next "
           "Python line")
REASONS = {State.STOPPED: "already stopped", State.EXITED: "has exited", State.STARTING: "still starting"}
NO_AGENT = ("it has no agent stream to be interrupted through (a process that only set PYTHONBREAKPOINT; one "
            "started through `python -m meshdbg.worker.mesh.bootstrap` has one)")


async def why_not_interrupted(client: ControlClient, session: SessionView) -> str:
    """Why `ControlClient.interrupt` did not ask `session`'s rank to stop (Ctrl-C after `c` in
    the console or `attach --plain`): its process's state, or that nothing reaches it while it
    runs (only an agent stream does: a process that only set PYTHONBREAKPOINT has none)."""
    for worker in await client.workers():
        if worker.registered and (worker.name, worker.rank) == (session.name, session.rank):
            return f"it is {worker.state.value}"
    return NO_AGENT


def not_stopped_yet(session: SessionView) -> bool:
    """Whether `session` was opened for an interrupt still pending (its rank blocked in C):
    it runs and has never stopped, so there is no pdb to talk to until it does."""
    return session.state is State.RUNNING and not session.filename


def cannot_break_in_yet(label: str, running: SessionView) -> str:
    """Why a command asked to stop (Ctrl-C in the console or `attach --plain`) has not yet."""
    return (f"{label} cannot break in yet: it is outside Python code at {where(running)} (a blocking call, C code "
            f"or a collective). It stops at its next Python line")


@dataclass
class InterruptReport:
    """What an interrupt did: the ranks asked, those that stopped, and the others by reason."""

    asked: list[int]
    stopped: list[int]
    not_asked: dict[str, list[int]] = field(default_factory=dict)  # reason → ranks
    no_answer: list[int] = field(default_factory=list)  # asked, but gave no answer by the deadline

    @property
    def not_stopped(self) -> list[int]:
        return sorted(set(self.asked) - set(self.stopped))

    def to_json(self) -> dict:
        return {"asked": self.asked, "now_stopped": self.stopped, "not_stopped": self.not_stopped,
                "not_asked": self.not_asked}

    def text(self) -> str:
        """`stopped rank 1; rank 2 not stopped yet: ...; rank 0 already stopped`, one clause each."""
        clauses = [f"stopped {ranks_text(self.stopped)}"] if self.stopped else []
        if self.not_stopped:
            clauses.append(f"{ranks_text(self.not_stopped)} {NOT_YET}")
        clauses += [f"{ranks_text(ranks)} {reason}" for reason, ranks in self.not_asked.items()]
        return "; ".join(clauses) if clauses else "no selected rank is running"


async def interrupt(client: ControlClient, selection: str, wait_s: float = BREAK_IN_S,
                    timeout_s: float = 0) -> InterruptReport:
    """Interrupt the selected ranks; the report once they stopped or `wait_s` passed
    (`timeout_s`: how long the server waits for each to take the request, 0 its default)."""
    chosen = parse_selection(selection) if selection.strip() else None

    def selected(view: Placed) -> bool:
        return chosen is None or chosen.matches(view.rank, view.coords)

    workers, sessions = await client.workers(), await client.list()
    if chosen is not None and not any(selected(view) for view in [*workers, *sessions]):
        raise chosen.no_match("no rank matches", [*workers, *sessions])
    before = {w.rank: w.state for w in workers if selected(w)}
    for session in sessions:
        if selected(session) and session.state is State.STOPPED:
            before[session.rank] = State.STOPPED
    asked = await client.interrupt(selection, timeout_s)
    stopped = await _stops(client, set(asked), wait_s) if asked else set()
    not_asked: dict[str, list[int]] = {}
    for rank, state in sorted(before.items()):
        if rank not in asked and state in REASONS:
            not_asked.setdefault(REASONS[state], []).append(rank)
    for worker in workers:  # running, with no agent stream: nothing reaches it
        if not worker.registered and worker.state is State.RUNNING and worker.rank not in asked and selected(worker):
            not_asked.setdefault(f"not stopped: {NO_AGENT}", []).append(worker.rank)
    return InterruptReport(sorted(asked), sorted(stopped), not_asked, asked.no_answer)


async def _stops(client: ControlClient, ranks: set[int], wait_s: float) -> set[int]:
    """Which of `ranks` have a stopped session within `wait_s` (the watch stream's replay counts)."""
    stopped: set[int] = set()

    async def follow() -> None:
        async for kind, view, _ in client.watch():
            if isinstance(view, SessionView) and kind is not WatchKind.CLOSED and view.state is State.STOPPED \
                    and view.rank in ranks:
                stopped.add(view.rank)
                if stopped == ranks:
                    return

    try:
        await asyncio.wait_for(follow(), wait_s)
    except TimeoutError:
        pass
    return stopped
