"""What `meshdbg run` says of its ranks: that they are ready, and, in the last line of a run
that failed, how every other rank ended."""

import subprocess
import sys
from pathlib import Path

from meshdbg.debugger.format import failure_text, status_text
from meshdbg.debugger.run import how_ranks_ended


def test_a_one_rank_run_says_its_rank_is_ready(tmp_path: Path) -> None:
    """(It said `1 ranks ready`.)"""
    (tmp_path / "job.py").write_text("print('done')\n")
    env = {"PATH": "/usr/bin:/bin", "MESHDBG_RUNTIME_DIR": str(tmp_path / "runtime"), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=1", "job.py"], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "meshdbg: 1 rank ready in " in done.stderr, done.stderr


def test_a_one_rank_run_that_fails_says_so_without_peers(tmp_path: Path) -> None:
    """(`rank 0 failed first (exit status 3); the mesh was stopped`, of a mesh of one.)"""
    (tmp_path / "job.py").write_text("raise SystemExit(3)\n")
    env = {"PATH": "/usr/bin:/bin", "MESHDBG_RUNTIME_DIR": str(tmp_path / "runtime"), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=1", "job.py"], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.splitlines()[-1] == "meshdbg: rank 0 failed (exit status 3)", done.stderr[-2000:]


def test_statuses_are_grouped_by_rank_and_named_as_a_shell_would() -> None:
    assert how_ranks_ended({0: 143, 1: 143, 2: 143}) == "ranks 0-2 SIGTERM"
    assert how_ranks_ended({3: 0, 0: 0, 2: 137}) == "ranks 0,3 status 0, rank 2 SIGKILL"
    assert how_ranks_ended({}) == ""
    assert (status_text(1), status_text(128 + 99), status_text(130)) == ("status 1", "status 227", "SIGINT")


def test_the_rank_that_failed_first_is_named_as_its_peers_are() -> None:
    """(`rank 3 failed first (exit status 137); ... ranks 0-2 SIGTERM`: the kill was a number.)"""
    assert failure_text(137) == "SIGKILL, exit status 137"
    assert failure_text(1) == "exit status 1"
    assert failure_text(255) == "exit status 255"  # no signal 127: a lost host's status, or exit(255)


def test_ranks_lost_with_their_host_are_named_so() -> None:
    assert how_ranks_ended({0: 143, 2: 255, 3: 255}, lost={2, 3}) == "rank 0 SIGTERM, ranks 2-3 host lost"
