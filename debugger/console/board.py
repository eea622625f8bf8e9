"""What the console knows about the mesh, kept current from `ControlClient.watch()`.

Live sessions by id, and for each (name, rank) whose last session closed, whether it went on
running (continued, quit) or exited. It turns watch events into the announcements printed
above the prompt and the counts of the bottom toolbar. Pure logic: no I/O, no prompt_toolkit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from meshdbg.debugger.control import SessionView
from meshdbg.debugger.format import where
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

RankKey = tuple[str, int]


def shown_name(session: SessionView) -> str:
    """The session's worker name where it says something: "" for the default worker."""
    return "" if session.name in ("", "worker") else session.name


def rank_label(session: SessionView) -> str:
    """`rank 2 (hosts=1,gpus=0)`, naming the worker when it is not the default one."""
    name = shown_name(session)
    who = f"{name} rank {session.rank}" if name else f"rank {session.rank}"
    return f"{who} ({session.coords_text})" if session.coords_text else who


@dataclass
class Board:
    """Sessions and ranks as last reported by the server."""

    live: dict[int, SessionView] = field(default_factory=dict)
    gone: dict[RankKey, State] = field(default_factory=dict)  # rank → RUNNING or EXITED
    announced: set[int] = field(default_factory=set)  # session ids whose stop was announced

    def reset(self, sessions: Iterable[SessionView] = ()) -> None:
        """Start over (a new server knows nothing of the old one's ranks) from these sessions."""
        self.live, self.gone, self.announced = {}, {}, set()
        for session in sessions:
            self.know(session)

    def know(self, session: SessionView) -> None:
        """A session that was live before we looked: on the board, but not news."""
        self.live[session.id] = session
        self.announced.add(session.id)

    def apply(self, kind: WatchKind, session: SessionView, reason: EndReason | None) -> str | None:
        """Take one watch event; return the announcement it deserves, if any."""
        key = (session.name, session.rank)
        if kind is WatchKind.CLOSED:
            self.live.pop(session.id, None)
            if reason is not None and reason.rank_runs_on:
                self.gone[key] = State.RUNNING
                return None
            self.gone[key] = State.EXITED
            return f"{rank_label(session)} exited: {reason or 'its session closed'}"
        self.live[session.id] = session
        self.gone.pop(key, None)
        if session.state is State.STOPPED and session.id not in self.announced:
            self.announced.add(session.id)
            return f"{rank_label(session)} stopped at {where(session)} ({session.reason})"
        return None

    def counts(self) -> dict[State, int]:
        """Stopped and running sessions, plus ranks running on or exited since their session."""
        totals = {State.STOPPED: 0, State.RUNNING: 0, State.EXITED: 0}
        for session in self.live.values():
            totals[State.STOPPED if session.state is State.STOPPED else State.RUNNING] += 1
        for state in self.gone.values():
            totals[state] += 1
        return totals

    def summary(self) -> str:
        totals = self.counts()
        return " · ".join(f"{count} {state}" for state, count in totals.items())

    def ranks(self) -> list[int]:
        return sorted({s.rank for s in self.live.values()})

    def names(self) -> list[str]:
        return sorted({s.name for s in self.live.values() if s.name})

    def dims(self) -> list[str]:
        return sorted({dim for s in self.live.values() for dim in s.coords})

    @property
    def idle(self) -> bool:
        """No session is open: every rank runs on or has exited."""
        return not self.live
