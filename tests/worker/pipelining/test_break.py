"""`meshdbg break SEL ACTION` on real pipeline jobs (`meshdbg run`, gloo): delivered to the running
ranks' agents, it stops exactly those ranks right before that action, for every schedule kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from watching import wait_sessions  # noqa: E402
from meshdbg.worker.pipelining.ir import ActionType, parts  # noqa: E402
from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402

from .pipeline_job import pipeline_job  # noqa: E402

MICROBATCHES = 6
KINDS = [("gpipe", 1), ("1f1b", 1), ("interleaved-1f1b", 2), ("dora-dfs", 2), ("interleaved-1f1b-tight", 2),
         ("looped-bfs", 2), ("zb1p", 2), ("zb1p-greedy", 2), ("zbv", 2), ("zbv-greedy", 2), ("dualpipev", 2)]


def last_backward(kind: str, stages_per_rank: int) -> tuple[str, int, int]:
    """The last stage's backward of microbatch 5 (`3B5`, or `3I5` where the backward is split),
    the rank that runs it and its place in that rank's lowered list."""
    schedule = lower(generate(kind, 2, stages_per_rank, MICROBATCHES))
    stage = schedule.num_stages - 1
    rank = schedule.stage_to_rank[stage]
    halves = [(index, half) for index, entry in enumerate(schedule.actions[rank]) for half in parts(entry)]
    index, action = next((i, a) for i, a in halves if (a.stage, a.microbatch) == (stage, 5)
                         and a.type in (ActionType.B, ActionType.I))
    return str(action), rank, index


@pytest.mark.parametrize("kind, stages_per_rank", KINDS)
def test_break_stops_right_before_the_action_for_every_kind(tmp_path: Path, kind: str, stages_per_rank: int) -> None:
    action, rank, index = last_backward(kind, stages_per_rank)
    with pipeline_job(tmp_path, 2, "--schedule", kind, "--stages-per-rank", str(stages_per_rank),
                      "--microbatches", str(MICROBATCHES), "--steps", "100000") as job:
        assert job.break_all(2, action) == [f"ranks 0-1: {action}"]
        (session,) = wait_sessions(job.env, {"stopped": [rank], "count": 1}, timeout=30)
        assert session["context"]["action"] == action
        by_rank = {r["rank"]: r for r in job.pipeline()["ranks"]}
        assert by_rank[rank]["state"] == "stopped" and by_rank[rank]["actions_done"] == index  # all before it ran, not it
        cast = json.loads(job.cli("cast", "--json", str(rank), "p str(action)").stdout)
        assert [c["output"].strip() for c in cast] == [repr(action)]


def test_break_on_a_selection_stops_only_those_ranks_in_the_stage_forward(tmp_path: Path) -> None:
    """`*F2` matches an action on both ranks; only the selected one stops, in its module's forward."""
    with pipeline_job(tmp_path, 2, "--schedule", "1f1b", "--microbatches", "4", "--steps", "100000") as job:
        job.wait_stepping(2)
        assert job.cli("break", "ranks(pp=1)", "*F2").returncode == 0
        (session,) = wait_sessions(job.env, {"stopped": [1], "count": 1}, timeout=30)
        assert session["function"] == "forward" and session["filename"].endswith("toymodel.py")
        assert session["context"] == {"stage": "1", "microbatch": "2", "action": "1F2"}
        listed = job.cli("break", "--list")
        assert listed.stdout.splitlines() == ["rank 0: no action breakpoints", "rank 1: *F2"]
        added = job.cli("break", "0", "0B3", "1F4", "*W*").stdout.splitlines()  # 4 microbatches: 0-3; no W in 1F1B
        assert added == ["rank 0: 0B3 1F4 W",
                         "note: no action of these ranks' schedules (1f1b: 2 stages, 4 microbatches) is 1F4: it never stops them",
                         "note: no action of these ranks' schedules (1f1b: 2 stages, 4 microbatches) is W: it never stops them"]
        assert job.cli("break", "--clear").stdout.strip() == "ranks 0-1: no action breakpoints"
        step = job.pipeline()["ranks"][1]["step"]
        assert job.cli("continue").returncode == 0
        job.wait_pipeline(lambda by_rank: by_rank[1]["step"] > step + 2, "rank 1 runs on, past its cleared breakpoint")
        assert job.cli("list", "--json").stdout.strip() == "[]"


@pytest.mark.parametrize("args, message", [
    (["all", "3X5"], "cannot parse action '3X5'"),
    (["ranks(pp=", "W"], "bad selection"),
    (["all"], "break needs a selection and an action"),
    (["--list", "all", "W"], "take a selection, no action"),
])
def test_break_refuses_a_malformed_action_or_selection(tmp_path: Path, args: list[str], message: str) -> None:
    """Usage errors, one line each, before any server is asked (none runs here)."""
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "none.json"))
    done = subprocess.run([sys.executable, "-m", "meshdbg", "break", *args], env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2 and done.stderr.startswith("meshdbg: ") and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
