"""Dead and hung peers are noticed in seconds, and said so.

A worker killed mid-command fails that rank's cast at once; a worker that hangs (SIGSTOP) is
reported as not answering within about 4 s, to casts and attached clients alike (keepalive
pings, meshdbg.wire.keepalive), and its session lives on (tests/faults/test_paused_ranks.py).
Every test signals only processes it started, and resumes what it stopped before cleaning up.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from e2e import Server, wait_for
from watching import wait_sessions
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.answers import Shared

NOTICE_S = 5.0
SLACK_S = 5.0  # a loaded CI machine's scheduling


def timed_cli(server: Server, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = server.cli(*args, timeout=NOTICE_S + SLACK_S + 10)
    return result, time.monotonic() - start


def test_a_cast_to_a_rank_killed_mid_command_reports_it_failed(server: Server) -> None:
    victim = server.worker("hold.py", 0)
    server.worker("hold.py", 1)
    server.wait_sessions(2)
    cast = subprocess.Popen([sys.executable, "-m", "meshdbg", "cast", "--json", "all", "p __import__('time').sleep(3) or 7"],
                            env=server.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(s["state"] == "running" for s in server.sessions()), what="the cast to start")
        os.kill(victim.pid, signal.SIGKILL)
        out, err = cast.communicate(timeout=NOTICE_S + SLACK_S + 10)
    finally:
        if cast.poll() is None:
            cast.kill()
            cast.communicate()
    assert cast.returncode == 1, err
    by_rank = {r["rank"]: r for r in json.loads(out)}
    assert by_rank[0]["ok"] is False and "exited or was killed" in by_rank[0]["output"]
    assert by_rank[1]["ok"] is True and by_rank[1]["output"].strip() == "7"


def test_a_stopped_rank_is_reported_not_answering_within_seconds(server: Server) -> None:
    hung = server.worker("hold.py", 0)
    server.worker("hold.py", 1)
    server.wait_sessions(2)
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        result, took = timed_cli(server, "cast", "--json", "all", "p word")
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    assert result.returncode == 1, result.stderr
    by_rank = {r["rank"]: r for r in json.loads(result.stdout)}
    assert by_rank[0]["ok"] is False and "not answering" in by_rank[0]["output"], by_rank[0]
    assert by_rank[1]["ok"] is True
    assert took < NOTICE_S + SLACK_S, f"took {took:.1f} s"
    # why, as soon as it is known (it said "no answer from rank 0 within 30 s", after 4 s)
    assert result.stderr == f"meshdbg: rank 0 (pid {hung.pid}) is stopped (SIGSTOP) and not answering\n", result.stderr


def test_the_late_reply_of_a_rank_that_stopped_answering_comes_under_its_command_s_line(server: Server) -> None:
    """A `p word` cast to a rank SIGSTOPped a moment before: "not answering". Woken, the rank
    runs the line and answers; that reply comes with the next command, under the line it
    answers, as a terminal shows it (it came as the next command's own output: `'x'` twice,
    for one `p word`), or in the replay of the next attach, once."""
    hung = server.worker("hold.py", 0)
    server.wait_sessions(1)

    def not_answering_then_woken() -> None:
        os.kill(hung.pid, signal.SIGSTOP)
        try:
            first, _ = timed_cli(server, "cast", "--json", "all", "p word")
        finally:
            os.kill(hung.pid, signal.SIGCONT)
        assert "not answering" in json.loads(first.stdout)[0]["output"], first.stdout
        wait_for(lambda: [s["state"] for s in server.sessions()] == ["stopped"], NOTICE_S + SLACK_S,
                 "rank 0 stopped again")

    def casts() -> list[str]:
        return [json.loads(server.cli("cast", "--json", "all", "p word").stdout)[0]["output"] for _ in range(2)]

    async def replay(client: ControlClient) -> str:
        async with client.attach(rank=0) as pdb:
            return pdb.replay.output

    not_answering_then_woken()
    assert casts() == ["(Pdb) p word\n'x'\n'x'\n", "'x'\n"]
    not_answering_then_woken()
    assert server.run(replay).endswith("\n(Pdb) p word\n'x'\n")
    assert casts() == ["'x'\n", "'x'\n"]


def test_a_rank_that_stops_answering_while_it_is_continued_is_named(server: Server) -> None:
    """`continue` while rank 0 is SIGSTOPped (still listed stopped): the resume is sent, and
    rank 0 is named as not answering. (It was named nowhere: "resumed 1 session (rank 1)",
    status 0, or "no stopped session could be resumed"; and the rank ran once woken.)"""
    hung = server.worker("hold.py", 0)
    server.worker("hold.py", 1)
    server.wait_sessions(2)
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        result, took = timed_cli(server, "continue")
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    assert result.returncode == 1, result.stderr
    assert result.stdout == "resumed 1 session (rank 1)\n", result.stdout
    assert result.stderr.startswith("meshdbg: no answer from rank 0 within "), result.stderr
    assert took < NOTICE_S + SLACK_S, f"took {took:.1f} s"


def test_continue_names_a_rank_not_answering_already_which_stays_paused_where_it_was(server: Server) -> None:
    """`continue` when rank 0 is listed not answering (SIGSTOPped): it is not asked, it is
    named with why, and once woken it is still paused at the same stop. (It was named
    nowhere: "resumed 1 session (rank 1)", status 0, as if every rank ran on.)"""
    hung = server.worker("hold.py", 0)
    server.worker("hold.py", 1)
    first = {s["rank"]: s["id"] for s in server.wait_sessions(2)}
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: [s["state"] for s in server.sessions() if s["rank"] == 0] == ["not answering"],
                 NOTICE_S + SLACK_S, "rank 0 listed not answering")
        result = server.cli("continue")
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    assert result.returncode == 1, result.stderr
    assert result.stdout == "resumed 1 session (rank 1)\n", result.stdout
    assert result.stderr == f"meshdbg: not resumed: rank 0 (pid {hung.pid}) is stopped (SIGSTOP) and not answering\n"
    wait_for(lambda: [(s["rank"], s["id"], s["state"]) for s in server.sessions()] == [(0, first[0], "stopped")],
             NOTICE_S + SLACK_S, "rank 0 paused at its stop again, rank 1 gone on")


def test_continue_names_a_rank_busy_with_another_clients_command_which_stays_paused(server: Server) -> None:
    """`continue` while rank 0 runs a cast's long command: it is named, and stays paused once the
    command is done. (It was named nowhere: "resumed 1 session (rank 1)", status 0.)"""
    server.worker("hold.py", 0)
    server.worker("hold.py", 1)
    server.wait_sessions(2)
    gate = Path(server.env["MESHDBG_CONNECTION_FILE"]).parent / "gate"
    cast = subprocess.Popen([sys.executable, "-m", "meshdbg", "cast", "0",
                             f"p __import__('pathlib').Path({str(gate)!r}).touch() or __import__('time').sleep(3)"],
                            env=server.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(gate.exists, what="the cast's command running on rank 0")
        result = server.cli("continue")
    finally:
        cast.communicate(timeout=NOTICE_S + SLACK_S + 10)
    assert result.returncode == 1, result.stderr
    assert result.stdout == "resumed 1 session (rank 1)\n", result.stdout
    assert result.stderr == "meshdbg: not resumed: rank 0 is busy running another command\n", result.stderr
    assert [(s["rank"], s["state"]) for s in server.sessions()] == [(0, "stopped")]


def test_continue_resumes_a_rank_whose_stop_is_still_opening(server: Server, tmp_path: Path) -> None:
    """A rank whose session is open but whose first prompt has not come (its `.pdbrc` runs) is
    paused too: `continue` waits for the prompt and resumes it. (It was refused as "running, not
    stopped in pdb": "no stopped session could be resumed", status 1, and the rank stayed.)"""
    (tmp_path / ".pdbrc").write_text("import time; time.sleep(2)\n")
    worker = server.worker("hold.py", 0, cwd=tmp_path)
    wait_for(lambda: [s["state"] for s in server.sessions()] == ["running"], NOTICE_S + SLACK_S,
             "rank 0's session open, its .pdbrc running")
    result = server.cli("continue")
    assert (result.returncode, result.stdout, result.stderr) == (0, "resumed 1 session (rank 0)\n", "")
    assert worker.communicate(timeout=NOTICE_S + SLACK_S)[0] == "rank 0 continued\n"


def test_cast_reaches_a_rank_whose_stop_is_still_opening(server: Server, tmp_path: Path) -> None:
    """As `continue`: the command waits for the first prompt and runs there. (It was refused as
    "running, not stopped in pdb": a cast right after a burst of stops left out the ranks whose
    prompt had not come yet.)"""
    (tmp_path / ".pdbrc").write_text("import time; time.sleep(2)\n")
    worker = server.worker("hold.py", 0, cwd=tmp_path)
    wait_for(lambda: [s["state"] for s in server.sessions()] == ["running"], NOTICE_S + SLACK_S,
             "rank 0's session open, its .pdbrc running")
    result = server.cli("cast", "all", "p word")
    assert (result.returncode, result.stdout, result.stderr) == (0, "rank 0:\n  'x'\n", "")
    assert server.cli("continue").returncode == 0
    assert worker.communicate(timeout=NOTICE_S + SLACK_S)[0] == "rank 0 continued\n"


def test_an_attached_client_hears_that_its_rank_stopped_answering(server: Server) -> None:
    hung = server.worker("hold.py", 0)
    server.wait_sessions(1)

    late: list[Shared] = []

    async def body(client: ControlClient) -> tuple[object, float, object]:
        async with client.attach(rank=0, on_shared=late.append) as pdb:
            os.kill(hung.pid, signal.SIGSTOP)
            start = time.monotonic()
            try:
                reply = await pdb.send("p word")
                took = time.monotonic() - start
            finally:
                os.kill(hung.pid, signal.SIGCONT)
            await asyncio.to_thread(wait_sessions, server.env, {"stopped": [0]}, NOTICE_S + SLACK_S + 10)
            async with asyncio.timeout(10):
                while not late:
                    await asyncio.sleep(0.01)
            return reply, took, await pdb.send("p 1")

    try:
        reply, took, again = server.run(body)
    finally:
        os.kill(hung.pid, signal.SIGCONT)
    assert not reply.ended and "stopped (SIGSTOP) and not answering" in reply.output, reply
    assert took < NOTICE_S + SLACK_S, f"took {took:.1f} s"
    # the first `p word`, run once the rank woke, is not lost: it comes as it arrives, once
    # (not again at the head of the next command's output, which a console would show twice)
    assert [s.reply.output for s in late if s.reply] == ["'x'\n"], late
    assert not again.ended and again.output == "1\n", again  # the same session, resumable


def test_a_client_of_a_hung_server_gives_up_in_seconds(server: Server) -> None:
    server.worker("hold.py", 0)
    server.wait_sessions(1)
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        result, took = timed_cli(server, "list")
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    assert result.returncode == 3 and "did not answer" in result.stderr, result.stderr
    assert took < NOTICE_S + SLACK_S
