"""`meshdbg pipeline` on real stalled jobs (`meshdbg run`, gloo): every rank says where it is, even
blocked in a RECV inside gloo, and the last line names the cause: a rank paused in pdb, a
schedule whose order deadlocks (loaded from a CSV), a rank killed mid-step, a slow rank."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from watching import wait_sessions  # noqa: E402

from .pipeline_job import Job, pipeline_job, throttled_wait  # noqa: E402


def wait_for_stall(job: Job, held: list[int], timeout: float) -> dict:
    """`pipeline --json` once a stall holds up exactly the ranks `held` (the last answer said
    when it never does: a failure seen once is explained by its run)."""
    last: list[dict] = []

    def check() -> dict | None:
        last[:] = [job.pipeline()]
        return last[0] if last[0]["stall"].get("held") == held else None

    try:
        return throttled_wait(check, timeout, f"a stall holding up ranks {held}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the last answer: {last}") from None


def test_the_others_name_a_rank_paused_in_pdb(tmp_path: Path) -> None:
    with pipeline_job(tmp_path, 4, "--schedule", "1f1b", "--microbatches", "4", "--steps", "2",
                      "--break-at", "2B1") as job:
        wait_sessions(job.env, {"stopped": [2], "count": 1}, timeout=40)
        answer = wait_for_stall(job, [0, 1, 3], timeout=30)
        assert answer["stall"]["cause"].startswith("rank 2 is paused in pdb at runtime.py:")
        assert answer["stall"]["cause"].endswith("(in 2B1)")
        waits = {r["rank"]: r["waits_for"] for r in answer["ranks"]}
        assert waits == {0: {"rank": 1, "action": "1SEND_B1"}, 1: {"rank": 2, "action": "2SEND_B1"}, 2: None,
                         3: {"rank": 2, "action": "2SEND_F3"}}
        text = job.cli("pipeline")
        assert text.returncode == 1
        last = text.stdout.splitlines()[-1]
        assert last.startswith("stall: rank 2 is paused in pdb") and "holds up ranks 0, 1, 3" in last
        assert "rank 1 waits in 1RECV_B1 for rank 2's 2SEND_B1" in last
        assert "rank 3 waits in 3RECV_F3 for rank 2's 2SEND_F3" in last


def test_a_misordered_schedule_from_a_csv_is_reported_as_a_cycle(tmp_path: Path) -> None:
    """Rank 1 runs microbatch 1 first; rank 0 wants microbatch 0's gradient before sending it."""
    csv = tmp_path / "misordered.csv"
    csv.write_text("0F0,0B0,0F1,0B1\n1F1,1B1,1F0,1B0\n")
    with pipeline_job(tmp_path, 2, "--load", str(csv), "--steps", "1") as job:
        answer = wait_for_stall(job, [0, 1], timeout=40)
        assert answer["stall"]["cause"] == ("deadlock, the schedule's order cannot finish: "
                                            "rank 0 waits in 0RECV_B0 for rank 1's 1SEND_B0; "
                                            "rank 1 waits in 1RECV_F1 for rank 0's 0SEND_F1")
        by_rank = {r["rank"]: r for r in answer["ranks"]}
        assert (by_rank[0]["actions_done"], by_rank[0]["doing"]) == (2, "0RECV_B0")  # 0F0, 0SEND_F0 done
        assert (by_rank[1]["actions_done"], by_rank[1]["doing"]) == (0, "1RECV_F1")


def test_a_rank_killed_mid_step_is_named_by_the_ranks_it_held_up(tmp_path: Path) -> None:
    with pipeline_job(tmp_path, 3, "--schedule", "1f1b", "--microbatches", "4", "--steps", "100000",
                      run_options=("--keep-going",)) as job:
        job.wait_stepping(3)
        workers = {w["rank"]: w for w in json.loads(job.cli("list", "--all", "--json").stdout)}
        os.kill(workers[1]["pid"], signal.SIGKILL)
        answer = wait_for_stall(job, [0, 2], timeout=30)
        assert answer["stall"]["cause"] == "rank 1 exited (SIGKILL)"
        by_rank = {r["rank"]: r for r in answer["ranks"]}
        assert by_rank[1]["state"] == "exited"
        assert by_rank[0]["waits_for"]["rank"] == 1 and by_rank[2]["waits_for"]["rank"] == 1


def test_a_slow_rank_is_named_with_the_action_it_is_in(tmp_path: Path) -> None:
    with pipeline_job(tmp_path, 2, "--schedule", "1f1b", "--microbatches", "4", "--steps", "1",
                      "--slow", "1,2,45") as job:
        answer = wait_for_stall(job, [0], timeout=40)
        assert answer["stall"]["cause"].startswith("rank 1 is slow: in 1F2 for ")
        assert {r["rank"]: r["doing"] for r in answer["ranks"]} == {0: "0RECV_B2", 1: "1F2"}
