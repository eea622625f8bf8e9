"""What the console knows about the mesh, kept current from `ControlClient.watch()`.

Live sessions by id; for each (name, rank) whose last session closed, whether it went on
running (continued, quit) or exited; and every worker process the server knows (its agent
streams: every rank of a `meshdbg run`, and bootstrap workers under `serve`), with its exit
status. It turns watch events into the announcements printed above the prompt and the counts
of the bottom toolbar, over every rank, not only those that stopped. Pure logic: no I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.format import exit_note, exit_text, rank_label, where
from meshdbg.debugger.news import News
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

RankKey = tuple[str, int]
StopKey = tuple[str, int, int, str, int]  # host, pid, thread, file, line: one stop, whatever its session id


def stop_key(session: SessionView) -> StopKey:
    """What names one stop across servers (a restarted server numbers its sessions afresh)."""
    return session.hostname, session.pid, session.thread_id, session.filename, session.lineno


_KEPT = (State.STOPPED, State.EXITED, State.NOT_ANSWERING)  # states a rank shows as they are (else: running)


@dataclass
class Board:
    """Sessions and ranks as last reported by the server."""

    live: dict[int, SessionView] = field(default_factory=dict)
    gone: dict[RankKey, State] = field(default_factory=dict)  # rank → RUNNING or EXITED, since its session
    workers: dict[RankKey, WorkerView] = field(default_factory=dict)  # every worker process the server knows
    news: News = field(default_factory=News)  # what was announced: each stop, each rank's end, once

    def reset(self, sessions: Iterable[SessionView] = ()) -> None:
        """Start over (a new server knows nothing of the old one's ranks) from these sessions."""
        self.live, self.gone, self.workers, self.news = {}, {}, {}, News()
        for session in sessions:
            self.know(session)

    def know(self, session: SessionView) -> None:
        """A session that was live before we looked: on the board, but not news."""
        self.live[session.id] = session
        self.news.know(session)

    def stops(self) -> set[StopKey]:
        """The stops of the live sessions on the board."""
        return {stop_key(session) for session in self.live.values()}

    def know_workers(self, workers: Iterable[WorkerView]) -> None:
        """The server's worker processes, as `list --all` has them; of several processes of one
        rank (a pool's children, each that rank too), a live one says the rank's state."""
        self.workers = {(w.name, w.rank): w for w in sorted(workers, key=lambda w: w.state is not State.EXITED)}

    def apply(self, kind: WatchKind, view: SessionView | WorkerView, reason: EndReason | None) -> str | None:
        """Take one watch event; return the announcement it deserves, if any (whether it
        deserves one is the news's to say: each stop, and each rank's end, once)."""
        key = (view.name, view.rank)
        told = self.news.feed(kind, view, reason) is not None
        if isinstance(view, WorkerView):  # only workers join (counted from now on, running) and exit
            if kind is WatchKind.JOINED or kind is WatchKind.EXITED:
                self.workers[key] = view
            if kind is WatchKind.EXITED:
                self.gone.pop(key, None)
            return exit_note(view) if told else None
        if kind is WatchKind.CLOSED:
            self.live.pop(view.id, None)
            self.gone[key] = State.RUNNING if reason is not None and reason.rank_runs_on else State.EXITED
            return f"{rank_label(view)} exited: {reason or 'its session closed'}" if told else None
        self.live[view.id] = view
        self.gone.pop(key, None)
        if told:
            return f"{self._who(view)} stopped at {where(view)} ({view.reason})"
        if view.state is State.NOT_ANSWERING:
            return f"{rank_label(view)} is not answering (it stays paused; it is listed again once it answers)"
        return None

    def rank_states(self) -> dict[RankKey, State]:
        """Each known rank's state: a live session says stopped or running; else what its session's
        end said, unless its process has exited since; else what its worker process is doing."""
        states = {key: w.state if w.state in _KEPT[1:] else State.RUNNING for key, w in self.workers.items()}
        for key, state in self.gone.items():
            if states.get(key) is not State.EXITED:
                states[key] = state
        for session in self.live.values():
            key = (session.name, session.rank)
            if session.state is State.STOPPED or states.get(key) is not State.STOPPED:
                states[key] = session.state if session.state in _KEPT else State.RUNNING
        return states

    def counts(self) -> dict[State, int]:
        """Stopped, running and exited ranks (and not answering ones, when there are)."""
        totals = {State.STOPPED: 0, State.RUNNING: 0, State.EXITED: 0}
        for state in self.rank_states().values():
            totals[state] = totals.get(state, 0) + 1
        return totals

    def summary(self) -> str:
        """`1 stopped · 2 running · 1 exited (r3: 1)`: the toolbar's counts, failed exits named."""
        text = " · ".join(f"{count} {state}" for state, count in self.counts().items())
        failed = [f"r{w.rank}: {exit_text(w)}" for key, w in sorted(self.workers.items(), key=lambda kw: kw[1].rank)
                  if w.state is State.EXITED and w.registered and exit_text(w) != "0" and key not in self._live_keys()]
        if failed:
            text += f" ({', '.join(failed[:3])}{', …' if len(failed) > 3 else ''})"
        return text

    def _live_keys(self) -> set[RankKey]:
        return {(s.name, s.rank) for s in self.live.values()}

    def running(self) -> int:
        return self.counts()[State.RUNNING]

    def thread_shown(self, session: SessionView) -> str:
        """How the prompt of `session` names its thread: not at all when it is its rank's only
        live one, by name, and also by pid when threads of several of the rank's processes have
        that name (each MainThread of a pool's children): `MainThread pid 4242`."""
        same_rank = [s for s in self.live.values() if (s.name, s.rank) == (session.name, session.rank)]
        if len(same_rank) < 2:
            return ""
        shared = sum(1 for s in same_rank if s.thread == session.thread) > 1
        return f"{session.thread} pid {session.pid}" if shared else session.thread

    def _who(self, session: SessionView) -> str:
        """`rank 0 (gpus=0)`, and which of its sessions when it has several: another thread's
        stop, or another process's (the children of `mp.spawn` or a pool, each a rank 0 too),
        read as the one already on screen."""
        shown = self.thread_shown(session)
        return f"{rank_label(session)}, thread {shown}," if shown else rank_label(session)

    def threads(self, rank: int) -> list[str]:
        """What names the rank's live sessions' threads on a command line: the name, or the
        thread id for a name with a space (`Thread-1 (work)`) or one that threads of several
        of its processes share (each MainThread of a pool's children: its pid)."""
        sessions = [s for s in self.live.values() if s.rank == rank]
        names = Counter(s.thread for s in sessions)
        return sorted({s.thread if s.thread and " " not in s.thread and names[s.thread] == 1 else str(s.thread_id)
                       for s in sessions})

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
