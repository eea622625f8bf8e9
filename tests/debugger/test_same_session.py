"""`breakpoint()` reached while pdb steps stays in the rank's one session (real workers, the CLI)."""

from __future__ import annotations

from pathlib import Path

from e2e import Server

REBREAK = str(Path(__file__).parent.parent / "parity" / "scripts" / "rebreak.py")


def test_cast_all_n_over_a_breakpoint_line_leaves_one_session_per_rank(server: Server) -> None:
    workers = [server.worker(REBREAK, rank, f"hosts={rank}", "loop") for rank in range(3)]
    first = server.wait_sessions(3)
    for _ in range(6):  # out of work(), round the generator, and onto breakpoint() again, twice
        moved = server.cli("cast", "all", "n")
        assert moved.returncode == 0, moved.stderr
    sessions = server.wait_sessions(3)
    assert sorted(s["id"] for s in sessions) == sorted(s["id"] for s in first)
    assert {s["function"] for s in sessions} <= {"work", "<genexpr>"}
    assert server.cli("cast", "all", "!sys.breakpointhook = lambda: None").returncode == 0  # no more stops
    assert server.cli("continue").returncode == 0
    for worker in workers:
        _, err = worker.communicate(timeout=20)
        assert worker.returncode == 0 and "total 6" in err
