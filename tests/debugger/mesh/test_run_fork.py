"""A process that a rank of `meshdbg run` forks stops at its own `breakpoint()` (a DataLoader
worker forked by a rank, as Linux forks them by default), and the rank goes on after it.

Every rank keeps its agent stream open, so at the fork its channel has a call open; gRPC
drives a channel's calls with a thread it starts only when the channel has none, and a fork
copies no thread: the child's stop on the inherited channel waited for the welcome for good.
A forked child now opens a channel of its own (meshdbg.worker.remote).
"""

from __future__ import annotations

import json
from pathlib import Path

from e2e import SCRIPTS as TOP_SCRIPTS
from e2e import wait_for
from mesh_helpers import Run, start_run


def _stopped(run: Run) -> list[dict]:
    listed = run.cli("list", "--json")
    return [s for s in json.loads(listed.stdout) if s["state"] == "stopped"] if listed.returncode == 0 else []


def test_a_process_forked_by_a_rank_stops_in_a_session_of_its_own(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "procs=1", str(TOP_SCRIPTS / "forks.py"))
    try:
        parent, = wait_for(lambda: _stopped(run), 20, "the rank's stop")
        assert run.cli("continue").returncode == 0  # it forks; the child stops while the rank waits for it
        child, = wait_for(lambda: [s for s in _stopped(run) if s["pid"] != parent["pid"]], 20, "the forked child's stop")
        assert child["rank"] == parent["rank"] and child["filename"].endswith("forks.py")
        assert run.cli("continue").returncode == 0
        code, out, err = run.finish()
        assert code == 0, err
        assert "parent done" in out
    finally:
        run.kill()
