"""Watch events as news: one item per stop, crash and exit, for `meshdbg watch` and `serve`.

A session is news once, when it is first seen stopped (a post-mortem stop is a crash); a
rank's end is news once: when its process exits (agent streams: `meshdbg run`, the bootstrap),
or when its session's stream breaks (a worker with only the breakpoint hook). Each item prints as one line for people
(`rank 2 (hosts=0,gpus=2) stopped at train.py:40 step; meshdbg attach 2`) or one JSON object
for scripts. Pure: no gRPC, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.format import exit_note, rank_label, where
from meshdbg.wire.vocabulary import EndReason, State, StopReason, WatchKind


class NewsKind(StrEnum):
    """What happened to a rank."""

    STOPPED = State.STOPPED.value
    CRASHED = "crashed"  # stopped post-mortem
    EXITED = State.EXITED.value


@dataclass(frozen=True)
class Item:
    """One piece of news about one rank."""

    kind: NewsKind
    view: SessionView | WorkerView

    def text(self) -> str:
        attach = f"meshdbg attach {self.view.rank}"
        if self.kind is NewsKind.STOPPED:
            return f"{rank_label(self.view)} stopped at {where(self.view)} ({self.view.reason}); {attach}"
        if self.kind is NewsKind.CRASHED:
            return f"{rank_label(self.view)} crashed: post-mortem at {where(self.view)}; {attach}"
        if isinstance(self.view, SessionView):  # a worker without an agent stream: only its session says
            return f"{rank_label(self.view)} exited: {EndReason.WORKER_GONE}"
        return exit_note(self.view)

    def to_json(self) -> dict[str, object]:
        fields = {key: value for key, value in self.view.to_json().items() if key != "id"}
        return {"event": str(self.kind), **fields}


def may_be_news(kind: WatchKind, state: State, stops: int, end: EndReason | None = None) -> bool:
    """False for a change that `News.feed` would take and drop, from the session's state, how
    many times it has stopped and why it ended: an update other than its first stop (a
    command's flip to running and back), or a close that lets the rank run on (a continue).
    A `serve` announcing its own registry is never woken for those (SessionRegistry.watch's
    `interest`)."""
    if kind is WatchKind.CLOSED:
        return end is None or not end.rank_runs_on
    return kind is not WatchKind.UPDATED or (state is State.STOPPED and stops == 1)


class News:
    """Turns a watch stream into items, each stop announced once: what `watch` and `serve`
    print, and what the console's board announces (in words of its own)."""

    def __init__(self) -> None:
        self._told: set[int] = set()  # session ids whose stop was news
        self._exits_told: set[tuple[str, int]] = set()  # ranks whose end was news

    def know(self, session: SessionView) -> None:
        """A session that was live before we looked: its stop is not news."""
        self._told.add(session.id)

    def feed(self, kind: WatchKind, view: SessionView | WorkerView, reason: EndReason | None) -> Item | None:
        key = (view.name, view.rank)
        if kind is WatchKind.EXITED and isinstance(view, WorkerView):
            return self._exit(key, view)
        if kind is WatchKind.CLOSED and isinstance(view, SessionView):
            self._told.discard(view.id)
            runs_on = reason is not None and reason.rank_runs_on  # else it may have died with its session
            return None if runs_on else self._exit(key, view)
        self._exits_told.discard(key)
        if not isinstance(view, SessionView) or view.state is not State.STOPPED or view.id in self._told:
            return None
        self._told.add(view.id)
        return Item(NewsKind.CRASHED if view.reason == StopReason.POST_MORTEM else NewsKind.STOPPED, view)

    def _exit(self, key: tuple[str, int], view: SessionView | WorkerView) -> Item | None:
        """A rank's end, told once: by its session's broken stream or by its process's exit."""
        if key in self._exits_told:
            return None
        self._exits_told.add(key)
        return Item(NewsKind.EXITED, view)
