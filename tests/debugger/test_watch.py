"""Stops, crashes and exits as news: `serve` announces them, `meshdbg watch [--json]` streams them."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Iterator

import pytest

from meshdbg.debugger.views import SessionView, WorkerView, change_of
from meshdbg.debugger.news import News, may_be_news
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, State, StopReason, WatchKind

WORKER = Path(__file__).parent / "console" / "stopping_worker.py"
WAIT_S = 20.0


class Lines:
    """A process's output read line by line in a thread, so a test can wait for a line with a
    timeout. (No pexpect here: it forks the test process, which other tests' gRPC has started
    threads in by now.)"""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))

    def expect(self, text: str) -> str:
        """The first line (from here on) that contains `text`; AssertionError after WAIT_S."""
        deadline = time.monotonic() + WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} within {WAIT_S:.0f} s; seen: {self.seen}")


def start(env: dict[str, str], *args: str, stderr: bool = False) -> tuple[subprocess.Popen, Lines]:
    process = subprocess.Popen([sys.executable, "-m", "meshdbg", *args], env=env, text=True,
                               stdout=subprocess.DEVNULL if stderr else subprocess.PIPE,
                               stderr=subprocess.PIPE if stderr else subprocess.DEVNULL)
    return process, Lines(process.stderr if stderr else process.stdout)


@pytest.fixture
def serving(private_runtime_dir: Path) -> Iterator[tuple[dict[str, str], Lines, list[subprocess.Popen]]]:
    """`meshdbg serve` in a private runtime folder, once it says it serves (its connection file
    written: watches and workers find it): (the environment that finds it, its stderr's lines,
    the processes of the test, the server first, each killed at the end)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    env.update(MESHDBG_RUNTIME_DIR=str(private_runtime_dir), PYTHONUNBUFFERED="1")
    serve, serve_says = start(env, "serve", "--port", "0", stderr=True)
    processes = [serve]
    try:
        serve_says.expect("serving on")
        yield env, serve_says, processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()


def start_worker(env: dict[str, str], rank: int, coords: str = "") -> subprocess.Popen:
    """A worker on stopping_worker.py through the mesh bootstrap, with the breakpoint hook set."""
    return subprocess.Popen([sys.executable, "-m", "meshdbg.worker.mesh.bootstrap", str(WORKER)],
                            env=dict(env, MESHDBG_RANK=str(rank), MESHDBG_COORDS=coords,
                                     PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_serve_announces_each_stop_and_exit_and_watch_streams_them(serving) -> None:
    env, serve_says, processes = serving
    json_watch, as_json = start(env, "watch", "--json")
    text_watch, as_text = start(env, "watch")
    worker = start_worker(env, 2, "hosts=0,gpus=2")
    processes += [json_watch, text_watch, worker]
    stop_line = "rank 2 (hosts=0,gpus=2) stopped at stopping_worker.py:17 <module> (breakpoint); meshdbg attach 2"
    assert serve_says.expect(stop_line) == f"meshdbg: {stop_line}"
    assert as_text.expect("stopped") == stop_line
    stopped = json.loads(as_json.expect('"event"'))
    assert stopped["event"] == "stopped" and stopped["rank"] == 2 and stopped["coords"] == {"hosts": 0, "gpus": 2}
    assert stopped["lineno"] == 17 and stopped["reason"] == "breakpoint"
    resumed = subprocess.run([sys.executable, "-m", "meshdbg", "continue"], env=env, capture_output=True,
                             text=True, timeout=WAIT_S)
    assert resumed.returncode == 0, resumed.stderr
    exit_line = "rank 2 (hosts=0,gpus=2) exited (status 0)"
    assert serve_says.expect("exited") == f"meshdbg: {exit_line}"
    assert as_text.expect("exited") == exit_line
    exited = json.loads(as_json.expect('"exited"'))
    assert exited["event"] == "exited" and exited["exit_code"] == 0 and exited["rank"] == 2
    worker.wait(timeout=WAIT_S)
    assert not any("Traceback" in line for line in serve_says.seen)


def test_watch_says_the_server_went_away_when_it_is_killed(serving) -> None:
    """(It said "no meshdbg server reachable at ... (Stream removed (Socket closed))".)"""
    env, _, processes = serving
    watch = subprocess.Popen([sys.executable, "-m", "meshdbg", "watch"], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    processes += [watch, start_worker(env, 0)]
    Lines(watch.stdout).expect("stopped at")  # the watch streams
    processes[0].kill()  # the server
    assert watch.wait(timeout=WAIT_S) == 3
    said = watch.stderr.read()
    assert said.startswith("meshdbg: the server at 127.0.0.1:") and said.endswith(" went away\n"), said


def view(rank: int, state: State = State.STOPPED, reason: str = StopReason.BREAKPOINT, session_id: int = 1
         ) -> SessionView:
    return SessionView(id=session_id, name="worker", rank=rank, coords={"gpus": rank}, hostname="h", pid=9,
                       thread="MainThread", thread_id=1, state=state, reason=reason, filename="/x/train.py",
                       function="step", lineno=40, context={})


def test_news_tells_each_stop_once_a_post_mortem_as_a_crash_and_exits_with_their_status() -> None:
    news = News()
    first = news.feed(WatchKind.OPENED, view(2), None)
    assert first is not None and first.text() == "rank 2 (gpus=2) stopped at train.py:40 step (breakpoint); meshdbg attach 2"
    assert news.feed(WatchKind.UPDATED, view(2), None) is None  # the same stop, again
    assert news.feed(WatchKind.UPDATED, view(2, State.RUNNING), None) is None
    assert news.feed(WatchKind.CLOSED, view(2), EndReason.CONTINUED) is None
    crash = news.feed(WatchKind.OPENED, view(2, reason=StopReason.POST_MORTEM, session_id=2), None)
    assert crash is not None and crash.text().startswith("rank 2 (gpus=2) crashed: post-mortem at train.py:40")
    worker = WorkerView(name="worker", rank=3, coords={"gpus": 3}, hostname="h", pid=9, state=State.EXITED, reason="",
                        filename="", function="", lineno=0, exit_code=None, signal=9, launcher="meshdbg")
    exited = news.feed(WatchKind.EXITED, worker, None)
    assert exited is not None and exited.text() == "rank 3 (gpus=3) exited (SIGKILL)"
    assert exited.to_json()["event"] == "exited" and exited.to_json()["signal"] == 9
    lost = news.feed(WatchKind.CLOSED, view(4, session_id=5), EndReason.WORKER_GONE)  # no agent stream
    assert lost is not None and lost.text() == "rank 4 (gpus=4) exited: the worker went away"
    assert news.feed(WatchKind.EXITED, WorkerView(**{**worker.to_json(), "rank": 4}), None) is None  # told once


def test_only_a_first_stop_is_news_among_updates_and_serve_is_never_woken_for_the_rest() -> None:
    def event(kind: WatchKind, state: State) -> pb.WatchEvent:
        return pb.WatchEvent(kind=kind.pb, session=pb.SessionInfo(id=1, state=state.pb, identity=pb.Identity(rank=1)))

    news = News()
    assert may_be_news(WatchKind.OPENED, State.RUNNING, 0)
    assert news.feed(*change_of(event(WatchKind.OPENED, State.RUNNING))) is None
    assert may_be_news(WatchKind.UPDATED, State.STOPPED, 1)
    assert news.feed(*change_of(event(WatchKind.UPDATED, State.STOPPED))) is not None
    for state in State:  # every later update (a command's flips, a silence) is dropped by feed too
        for stops in (1, 2, 3):
            if not may_be_news(WatchKind.UPDATED, state, stops):
                assert news.feed(*change_of(event(WatchKind.UPDATED, state))) is None
    assert not may_be_news(WatchKind.UPDATED, State.RUNNING, 1)
    assert not may_be_news(WatchKind.UPDATED, State.STOPPED, 2)
    assert may_be_news(WatchKind.CLOSED, State.EXITED, 5, EndReason.WORKER_GONE)  # it may have died: news
    assert not may_be_news(WatchKind.CLOSED, State.EXITED, 5, EndReason.CONTINUED)
    closed = pb.WatchEvent(kind=WatchKind.CLOSED.pb, reason=EndReason.CONTINUED.pb,
                           session=pb.SessionInfo(id=1, state=State.EXITED.pb, identity=pb.Identity(rank=1)))
    assert news.feed(*change_of(closed)) is None


def test_a_watcher_with_an_interest_is_queued_only_the_changes_it_takes() -> None:
    """The registry builds and queues a command's state flips only for the watchers that take
    them (what serve's announcer and the collectives guard skip never wakes them)."""
    async def scenario() -> tuple[list[int], list[int]]:
        registry = SessionRegistry()

        async def write(message: pb.ServerMessage) -> None:
            pass

        everything = registry.watch()
        lifecycle = registry.watch(interest=lambda kind, session: kind is not WatchKind.UPDATED)
        for stream in (everything, lifecycle):
            assert WatchKind.of((await anext(stream)).kind) is WatchKind.SYNCED  # no session yet: the replay is empty
        session = registry.open(pb.Identity(rank=1), write)
        session.on_prompt(pb.Prompt(prompt="(Pdb) "))
        session.on_end("", EndReason.CONTINUED)
        seen: tuple[list[int], list[int]] = ([], [])
        for stream, kinds in zip((everything, lifecycle), seen):
            while len(kinds) < 4 and (kinds[-1:] != [WatchKind.CLOSED.pb]):
                kinds.append((await asyncio.wait_for(anext(stream), 5)).kind)
            await stream.aclose()
        return seen

    everything, lifecycle = asyncio.run(scenario())
    assert everything == [WatchKind.OPENED.pb, WatchKind.UPDATED.pb, WatchKind.CLOSED.pb]
    assert lifecycle == [WatchKind.OPENED.pb, WatchKind.CLOSED.pb]


def test_a_watcher_sees_each_change_as_it_was_and_after_the_command_it_answers() -> None:
    """A change is taken as it is published and its event built when a watcher reads it (issue
    22): a watcher that reads only after the session moved on still sees every change with
    the state and prompt of its moment. And the command a prompt answers resumes before any
    watcher hears of that prompt (`meshdbg run`'s console watches while it runs commands)."""
    async def scenario() -> tuple[list[tuple[int, str]], bool]:
        registry = SessionRegistry()
        sent, synced, running_seen = asyncio.Event(), asyncio.Event(), asyncio.Event()
        seen: list[tuple[int, str]] = []
        answered_first = False

        async def write(message: pb.ServerMessage) -> None:
            sent.set()

        async def watcher() -> None:  # waits on the stream as the command's prompt comes
            nonlocal answered_first
            async for event in registry.watch():
                if event.kind == WatchKind.SYNCED.pb:
                    synced.set()
                    continue
                seen.append((event.session.state, event.session.prompt))
                if len(seen) == 3:
                    running_seen.set()
                if len(seen) == 4:
                    answered_first = command.done()
                    return

        watching = asyncio.ensure_future(watcher())
        await asyncio.wait_for(synced.wait(), 5)
        session = registry.open(pb.Identity(rank=1), write)
        session.on_prompt(pb.Prompt(prompt="(Pdb) "))
        command = asyncio.ensure_future(session.execute("commands 1"))
        await asyncio.wait_for(asyncio.gather(sent.wait(), running_seen.wait()), 5)
        session.on_prompt(pb.Prompt(prompt="(com) "))
        await asyncio.wait_for(asyncio.gather(command, watching), 5)
        return seen, answered_first

    seen, answered_first = asyncio.run(scenario())
    assert seen == [(State.RUNNING.pb, ""), (State.STOPPED.pb, "(Pdb) "), (State.RUNNING.pb, "(Pdb) "),
                    (State.STOPPED.pb, "(com) ")]
    assert answered_first
