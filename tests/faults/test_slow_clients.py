"""A client that stalls or dies mid-stream never costs a rank.

`meshdbg cast 0 "p 'x'*N"` streams a large output; its client is SIGSTOPped (or killed) while
it streams. The server cuts the stalled client (bounded buffers: it never holds the worker),
the rank stays listed and resumable, the client that comes back reads why in one line, and the
output it missed is replayed to the next client that attaches (its tail, within the replay
bound). Real server, worker and CLI processes; every test resumes what it stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from e2e import Server, wait_for
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.deadlines import CLIENT_STALL_S, cut_off_text

BIG = "p 'x'*100_000_000"
NOTICE_S = 5.0  # keepalive
SLACK_S = 5.0


def start_big_cast(server: Server) -> subprocess.Popen:
    """A cast of a 100 MB output, once the rank is running it (the output is streaming)."""
    cast = subprocess.Popen([sys.executable, "-m", "meshdbg", "cast", "0", BIG], env=server.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: any(s["state"] == "running" for s in server.sessions()), what="the cast to start")
    return cast


def the_rank_lives_on(server: Server) -> str:
    """The rank is stopped again and answers; what an attaching client is shown first."""
    wait_for(lambda: [s["state"] for s in server.sessions()] == ["stopped"], timeout=CLIENT_STALL_S + NOTICE_S + 10,
             what="the rank to be stopped at its prompt again")

    async def attach(client: ControlClient) -> tuple[str, str]:
        async with client.attach(rank=0) as pdb:
            return pdb.replay.output, (await pdb.send("p word")).output

    replay, answer = server.run(attach)
    assert answer == "'x'\n"
    return replay


@pytest.mark.timeout(90)
def test_a_stopped_client_is_cut_and_its_rank_lives_on(server: Server) -> None:
    server.worker("hold.py", 0)
    server.wait_sessions(1)
    before = server.peak_memory_mb()
    cast = start_big_cast(server)
    os.kill(cast.pid, signal.SIGSTOP)
    try:
        replay = the_rank_lives_on(server)  # while the client is still stopped
    finally:
        os.kill(cast.pid, signal.SIGCONT)
    out, err = cast.communicate(timeout=30)
    assert cast.returncode == 1, err
    assert err.strip() == f"meshdbg: {cut_off_text()}"
    assert replay.endswith("x" * 1000 + "'\n")  # the missed output's tail, replayed on attach
    assert_output_not_kept(server, before)


def assert_output_not_kept(server: Server, before_mb: float) -> None:
    """The output that came after its client went away went to the transcript (its tail) and
    no further: it was collected for the cast's reply, and the server grew 217-348 MB on the
    100 MB (3-5 MB now)."""
    grown_mb = server.peak_memory_mb() - before_mb
    assert grown_mb < 50, f"the server's peak memory grew {grown_mb:.0f} MB on a 100 MB output its client left"


@pytest.mark.timeout(90)
def test_a_client_killed_mid_stream_costs_nothing(server: Server) -> None:
    worker = server.worker("hold.py", 0)
    server.wait_sessions(1)
    before = server.peak_memory_mb()
    cast = start_big_cast(server)
    cast.kill()
    cast.communicate()
    replay = the_rank_lives_on(server)
    assert replay.endswith("x" * 1000 + "'\n")
    assert_output_not_kept(server, before)
    assert server.cli("continue", "0").returncode == 0
    assert worker.stdout.readline().strip() == "rank 0 continued"
