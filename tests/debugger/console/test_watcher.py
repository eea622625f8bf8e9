"""The console's watcher on a scripted watch stream: the replay is known, `synced` is no session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from meshdbg.debugger.console.app import Console
from meshdbg.wire.vocabulary import EndReason, State, WatchKind
from meshdbg.debugger.views import SessionView
from meshdbg.wire.proto import debugger_pb2 as pb
from test_commands import session


class ScriptedClient:
    """Stands in for ControlClient: one watch stream that plays `events`, then stays open."""

    def __init__(self, events: list[tuple[str, SessionView, str]]) -> None:
        self.events = events
        self.played = asyncio.Event()

    async def watch(self, exits: bool = False) -> AsyncIterator[tuple[WatchKind, SessionView, EndReason | None]]:
        for event in self.events:
            yield event
        self.played.set()
        await asyncio.Event().wait()

    async def workers(self) -> list:
        return []  # no agent streams: the board counts ranks from their sessions


def test_replayed_sessions_are_known_and_synced_puts_nothing_on_the_board(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHDBG_HISTORY", str(tmp_path / "history"))
    synced_event = (WatchKind.SYNCED, SessionView.from_pb(pb.SessionInfo()), None)
    client = ScriptedClient([(WatchKind.OPENED, session(0), None), synced_event, (WatchKind.OPENED, session(1), None),
                             (WatchKind.CLOSED, session(0, state=State.EXITED), EndReason.WORKER_GONE)])
    announced: list[str] = []

    async def scenario() -> Console:
        console = Console(client)  # type: ignore[arg-type]
        console.board.gone[("worker", 7)] = State.EXITED  # from a server before this one
        console.announce = announced.append  # type: ignore[method-assign]
        watcher = asyncio.ensure_future(console._watch())
        try:
            await asyncio.wait_for(client.played.wait(), 5)
        finally:
            watcher.cancel()
        return console

    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        console = asyncio.run(scenario())
    assert console.synced
    assert list(console.board.live) == [1]
    assert console.board.counts() == {"stopped": 1, "running": 0, "exited": 1}
    assert announced == ["rank 1 (hosts=0,gpus=1) stopped at train.py:12 step (breakpoint)",
                         "rank 0 (hosts=0,gpus=0) exited: the worker went away"]
