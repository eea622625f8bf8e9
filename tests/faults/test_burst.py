"""A burst of simultaneous breakpoint()s from real processes and threads is listed whole.

10 processes of 200 threads each reach `breakpoint()` at the same moment (a barrier): every
one of the 2,000 stops is listed, none skipped ("continuing" on a worker's stderr), no worker
crashes, and after `continue all` every process finishes. The full-size figures (50 x 200 and
10 x 1,000) come from bench/bench_scale.py --real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e import Server

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
