"""A burst of simultaneous breakpoint()s from real processes and threads is listed whole.

10 processes of 200 threads each reach `breakpoint()` at the same moment (a barrier): every
one of the 2,000 stops is listed, none skipped ("continuing" on a worker's stderr), no worker
crashes, and after `continue all` every process finishes. The full-size figures (50 x 200 and
10 x 1,000) come from bench/bench_scale.py --real.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from e2e import SCRIPTS, Server

PROCESSES, THREADS = 10, 200


@pytest.mark.timeout(120)
def test_every_breakpoint_of_a_burst_is_listed_and_none_skipped(server: Server, tmp_path: Path) -> None:
    logs = [tmp_path / f"rank{rank}.err" for rank in range(PROCESSES)]
    workers = [server.worker("burst.py", rank, "", str(THREADS), stderr=log.open("w"))
               for rank, log in enumerate(logs)]
    listed = server.wait_sessions(PROCESSES * THREADS, timeout=60)
    assert sorted({(s["rank"], s["thread"]) for s in listed}) == sorted(
        {(rank, f"burst-{index}") for rank in range(PROCESSES) for index in range(THREADS)})
    resumed = server.cli("continue", "all", timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    for worker, log in zip(workers, logs):
        out, _ = worker.communicate(timeout=60)
        assert (worker.returncode, out) == (0, "done\n"), log.read_text()[-2000:]
        assert log.read_text() == ""


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port that refuses connections: bound (so no one else takes it) but never listening."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def test_a_process_that_cannot_reach_any_server_says_so_once(refused_port: int) -> None:
    """50 threads of one process stop at once with no server listening: one report, not 50."""
    env = dict(os.environ, MESHDBG_ADDR=f"127.0.0.1:{refused_port}", MESHDBG_TOKEN="t", MESHDBG_RANK="0",
               PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
    env.pop("MESHDBG_CONNECTION_FILE", None)
    done = subprocess.run([sys.executable, str(SCRIPTS / "burst.py"), "50"], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and "no meshdbg server reachable" in lines[0], done.stderr
    assert lines[1] == "meshdbg: no terminal for local pdb; continuing"
