"""A process's next stop opens on the stream its last stop parked (meshdbg.worker.parking;
issue 22: setting a stream up and tearing it down was most of a `continue`'s cost above its
floor), with real `meshdbg serve`s and real workers: the stream is the same one stop after
stop; a stream whose server went away, stopped or stalled is never a lost stop; a burst of
threads parks at most PARKED_LIMIT, a server keeps at most its own limit; a process that exits at once after `continue` (os._exit,
no exit handler) still ended its session as continued."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

import pytest

from e2e import Server, servicer_on_loopback, start_server, wait_for
from meshdbg.debugger import servicer
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, WatchKind
from meshdbg.worker import parking
from meshdbg.worker.parking import PARKED_LIMIT
from meshdbg.worker.remote import RemoteSession

ROUND_S = 20.0


def parked_after_round(stderr: IO[str]) -> list[str]:
    """The ids of the streams the worker keeps parked, as it says after its next round."""
    deadline = time.monotonic() + ROUND_S
    while time.monotonic() < deadline:
        line = stderr.readline()
        if line.startswith("parked:"):
            return line.split()[1:]
        if not line:
            break
    raise AssertionError("the worker said nothing of its parked streams")


def finished(worker: subprocess.Popen) -> str:
    """What the worker wrote on stderr after the rounds read so far; it exited with 0."""
    assert worker.wait(ROUND_S) == 0
    assert worker.stderr is not None
    return worker.stderr.read()


def continue_all(server: Server) -> None:
    resumed = server.cli("continue")
    assert resumed.returncode == 0, resumed.stderr


def test_each_stop_of_a_process_opens_on_the_stream_its_last_stop_parked(server: Server) -> None:
    worker = server.worker("stops_again.py", 0, "", "3")
    ids = []
    parked = []
    for _ in range(3):
        [session] = server.wait_sessions(1)
        ids.append(session["id"])
        assert server.cli("cast", "all", "p value").stdout.strip().endswith(str(len(ids) * 10 - 10))
        continue_all(server)
        parked.append(parked_after_round(worker.stderr))
    assert len(set(ids)) == 3  # a new session each stop
    assert len(parked[0]) == 1 and parked[1] == parked[0] and parked[2] == parked[0]  # on one stream
    assert "done" in finished(worker)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["server stopped", "server killed"])
def test_a_stop_after_its_server_went_away_reaches_the_next_server(tmp_path: Path, how: signal.Signals) -> None:
    gate = tmp_path / "gate"
    first = start_server(tmp_path)
    second = None
    try:
        worker = first.worker("stops_again.py", 0, "", "2", "1", str(gate))
        first.wait_sessions(1)
        continue_all(first)
        assert len(parked_after_round(worker.stderr)) == 1
        first.process.send_signal(how)  # a stopped server says goodbye on the parked stream; a killed one does not
        first.process.communicate(timeout=ROUND_S)
        first.workers.remove(worker)
        second = start_server(tmp_path)  # on the same connection file, at another port
        second.workers.append(worker)
        gate.with_name("gate-1").touch()
        [session] = second.wait_sessions(1)
        assert session["rank"] == 0
        shown = second.cli("cast", "all", "p value")
        assert shown.stdout.strip().endswith("10"), shown.stdout + shown.stderr
        continue_all(second)
        assert "done" in finished(worker)
    finally:
        first.close()
        if second is not None:
            second.close()


@pytest.mark.parametrize("stall_s", [1.5, 6.0], ids=["shorter than keepalive", "longer than keepalive"])
def test_a_stop_on_the_parked_stream_of_a_stalled_server_is_one_session_once_it_wakes(
        server: Server, tmp_path: Path, stall_s: float) -> None:
    """The stall is the fault itself (a loaded machine): a stall shorter than keepalive's
    ~4 s leaves the parked stream up, and the hello waits in it; a longer one breaks it, and
    the stop opens a fresh stream once the server answers. Either way: one session, no ghost
    of the hello on the broken stream."""
    gate = tmp_path / "gate"
    worker = server.worker("stops_again.py", 0, "", "2", "1", str(gate))
    server.wait_sessions(1)
    continue_all(server)
    assert len(parked_after_round(worker.stderr)) == 1
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        gate.with_name("gate-1").touch()
        time.sleep(stall_s)
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    [session] = server.wait_sessions(1, timeout=30)
    shown = server.cli("cast", "all", "p value")
    assert shown.stdout.strip().endswith("10"), shown.stdout + shown.stderr
    continue_all(server)
    assert "done" in finished(worker)


def test_threads_stopping_together_park_at_most_the_limit_and_all_stop_again(server: Server) -> None:
    threads = PARKED_LIMIT + 2
    worker = server.worker("stops_again.py", 0, "", "2", str(threads))
    for _ in range(2):
        sessions = server.wait_sessions(threads)
        assert len({s["thread_id"] for s in sessions}) == threads
        continue_all(server)
        assert len(parked_after_round(worker.stderr)) == PARKED_LIMIT
    assert "done" in finished(worker)


EXITS_AT_ONCE = """
import os
breakpoint()
os._exit(0)  # no exit handler runs: the parked stream is never closed, only its socket
"""


def test_a_process_that_exits_at_once_after_continue_ended_its_session_as_continued(
        server: Server, tmp_path: Path) -> None:
    script = tmp_path / "exits_at_once.py"
    script.write_text(EXITS_AT_ONCE)
    worker = server.worker(str(script))
    server.wait_sessions(1)

    async def end_reason(client: ControlClient) -> EndReason | None:
        async with asyncio.timeout(ROUND_S):
            changes = client.watch()
            async for kind, _, _ in changes:
                if kind is WatchKind.SYNCED:
                    break
            assert len(await client.resume()) == 1
            async for kind, _, reason in changes:
                if kind is WatchKind.CLOSED:
                    return reason
        return None

    assert server.run(end_reason) is EndReason.CONTINUED
    assert worker.wait(ROUND_S) == 0


def test_a_server_keeps_at_most_its_limit_of_parked_streams_and_a_stop_opens_on_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servicer, "PARKED_LIMIT", 1)
    registry = SessionRegistry()
    with servicer_on_loopback(servicer.DebuggerServicer(registry)) as connection:
        def stop(rank: int) -> RemoteSession:
            return RemoteSession(lambda: connection, pb.Identity(rank=rank, protocol_version=PROTOCOL_VERSION))

        first, second = stop(0), stop(1)
        for session in (first, second):
            session.end("", EndReason.CONTINUED, park=True)
            session.wait_closed()
        # the server parked one stream and ended the other, which the worker let go then
        wait_for(lambda: len(registry.parked) == 1 and len(parking._parked[connection.addr]) == 1,
                 what="one stream parked on each side")
        [kept] = parking._parked[connection.addr]
        third = stop(2)
        assert not parking._parked[connection.addr] and not registry.parked  # taken by the new stop
        assert third.session_id not in (first.session_id, second.session_id)
        third.end("", EndReason.CONTINUED, park=True)
        third.wait_closed()
        wait_for(lambda: parking._parked[connection.addr] == [kept], what="the same stream parked again")
