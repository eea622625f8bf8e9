"""Every command that waits on ranks has a deadline and names the ranks that did not answer.

Rank 1 is a real process whose session is connected but never answers (tests/scripts/mute.py);
rank 0 is an ordinary paused worker. `cast`, `compare`, `continue` and `interrupt` each come
back by their deadline (--timeout), with rank 0's answer, and one line naming rank 1, exit 1.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from e2e import Server

TIMEOUT_S = 2
SLACK_S = 8.0
NAMED = f"meshdbg: no answer from rank 1 within {TIMEOUT_S} s (--timeout S waits longer)"


@pytest.fixture
def mute(server: Server) -> Server:
    """The server with rank 0 paused at hold.py and rank 1 connected but mute."""
    server.worker("hold.py", 0)
    silent = server.worker("mute.py", 1, stdin=subprocess.PIPE)
    assert silent.stdout.readline().strip() == "ready"
    server.wait_sessions(2)
    return server


def timed(server: Server, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = server.cli(*args, "--timeout", str(TIMEOUT_S), timeout=TIMEOUT_S + SLACK_S + 10)
    return result, time.monotonic() - start


def test_cast_names_the_rank_that_never_answers(mute: Server) -> None:
    result, took = timed(mute, "cast", "--json", "all", "p word")
    assert took < TIMEOUT_S + SLACK_S
    assert result.returncode == 1 and result.stderr.strip() == NAMED, result.stderr
    by_rank = {r["rank"]: r for r in json.loads(result.stdout)}
    assert by_rank[0] == {**by_rank[0], "ok": True, "output": "'x'\n"}
    assert by_rank[1]["ok"] is False and by_rank[1]["output"] == f"no answer within {TIMEOUT_S} s"


def test_compare_names_the_rank_that_never_answers(mute: Server) -> None:
    result, took = timed(mute, "compare", "all", "word")
    assert took < TIMEOUT_S + SLACK_S
    assert result.returncode == 1 and result.stderr.strip() == NAMED, result.stderr
    assert "'x'" in result.stdout


def test_continue_names_the_rank_that_never_answers(mute: Server) -> None:
    result, took = timed(mute, "continue", "all")
    assert took < TIMEOUT_S + SLACK_S
    assert result.returncode == 1 and result.stderr.strip() == NAMED, result.stderr
    assert result.stdout.strip() == "resumed 1 session (rank 0)"


def test_interrupt_names_the_rank_that_never_answers(mute: Server) -> None:
    cast, _ = timed(mute, "cast", "1", "n")  # rank 1 now "runs" a command it never finishes
    assert cast.returncode == 1
    result, took = timed(mute, "interrupt", "1")
    assert took < TIMEOUT_S + SLACK_S
    assert result.returncode == 1 and result.stderr.strip() == NAMED, result.stderr
    assert result.stdout.strip().startswith("rank 1 not stopped yet"), result.stdout  # the report names it
