"""`meshdbg pipeline --trace F --svg F` on a real job: the recorded step of every rank, beside its plan."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402

from .pipeline_job import pipeline_job  # noqa: E402


def test_the_trace_holds_the_executed_schedule_as_run_and_as_planned(tmp_path: Path) -> None:
    schedule = lower(generate("interleaved-1f1b", 2, 2, 4))
    with pipeline_job(tmp_path, 2, "--schedule", "interleaved-1f1b", "--stages-per-rank", "2", "--microbatches", "4",
                      "--steps", "100000") as job:
        job.wait_pipeline(lambda by_rank: len(by_rank) == 2 and all(r["step"] >= 2 for r in by_rank.values()),
                          "two steps done on both ranks")
        trace, svg = tmp_path / "run.json", tmp_path / "run.svg"
        done = job.cli("pipeline", "--trace", str(trace), "--svg", str(svg))
        assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("step ") and " ms as run, " in line for line in lines)
    assert any(line.startswith("bubble as run / planned: rank 0 ") for line in lines)
    events = json.loads(trace.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes[0] == "planned (simulated)" and processes[1].startswith("as run (step ")
    for pid in (0, 1):
        spans = sorted((e for e in events if e["ph"] == "X" and e["pid"] == pid), key=lambda e: (e["tid"], e["ts"]))
        for rank, actions in enumerate(schedule.actions):
            assert [e["name"] for e in spans if e["tid"] == rank] == [str(a) for a in actions]
    run = [e for e in events if e["ph"] == "X" and e["pid"] == 1]
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in run)
    root = ET.fromstring(svg.read_text())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
