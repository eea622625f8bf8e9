"""The runtime's tracker: action breakpoints changed by the agent, positions and times reported,
and what marking an action costs (cheap enough to leave on)."""

from __future__ import annotations

import time

import pytest

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker.pipelining.errors import ActionParseError
from meshdbg.worker.pipelining.ir import parse_action
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.progress import STEPS_KEPT, Tracker
from meshdbg.worker.pipelining.schedules import generate

SCHEDULE = lower(generate("1f1b", 2, 1, 4))


def run_step(tracker: Tracker, stop_at: int | None = None) -> None:
    """Mark one step of rank 0's list on `tracker`, as the runtime does (or up to `stop_at`)."""
    tracker.begin_step()
    for index in range(len(SCHEDULE.actions[0])):
        tracker.begin(index)
        if index == stop_at:
            return
        tracker.end(index)
    tracker.end_actions()
    tracker.end_step()


def test_breakpoints_are_added_cleared_and_matched() -> None:
    tracker = Tracker()
    assert tracker.change_breaks(["3B5", "*F2", "3B5"]) == ["3B5", "*F2"]
    assert tracker.breaks_on(parse_action("3B5")) and tracker.breaks_on(parse_action("0F2"))
    assert not tracker.breaks_on(parse_action("3B4"))
    with pytest.raises(ActionParseError):
        tracker.change_breaks(["W", "3Q1"])
    assert tracker.change_breaks([]) == ["3B5", "*F2"]  # a refused request changed nothing
    assert tracker.change_breaks(["W"], clear=True) == ["W"]


def test_a_report_says_where_the_runtime_is_and_what_it_timed() -> None:
    tracker = Tracker()
    assert not tracker.report(pb.PipelineRequest()).HasField("progress")  # no runtime yet
    tracker.attach(SCHEDULE, 0)
    for _ in range(STEPS_KEPT + 2):
        run_step(tracker)
    run_step(tracker, stop_at=3)
    report = tracker.report(pb.PipelineRequest(request_id=7, add_breaks=["0B1"], timings=True))
    progress = report.progress
    assert report.request_id == 7 and list(report.breaks) == ["0B1"]
    assert list(progress.actions) == [str(a) for a in SCHEDULE.actions[0]]
    assert (progress.step, progress.position, progress.in_step) == (STEPS_KEPT + 2, 3, True)
    assert [s.step for s in progress.steps] == list(range(2, STEPS_KEPT + 2))  # the last ones, completed only
    last = progress.steps[-1]
    assert abs(last.started - time.time()) < 60
    assert all(0 <= start <= end for start, end in zip(last.starts, last.ends))
    assert list(last.starts) == sorted(last.starts)
    bad = tracker.report(pb.PipelineRequest(add_breaks=["nope"]))
    assert "cannot parse action 'nope'" in bad.error and list(bad.breaks) == ["0B1"]


def test_marking_an_action_costs_a_few_microseconds() -> None:
    """What the runtime adds per action: begin, end, and the breakpoint check (none set)."""
    tracker = Tracker()
    tracker.attach(SCHEDULE, 0)
    action = parse_action("0F1")
    count = len(SCHEDULE.actions[0])
    best = float("inf")
    for _ in range(5):  # the best of five runs of 2,000 steps: least disturbed by other load
        started = time.perf_counter()
        for _ in range(2000):
            tracker.begin_step()
            for index in range(count):
                tracker.begin(index)
                tracker.breaks_on(action)
                tracker.end(index)
            tracker.end_actions()
            tracker.end_step()
        best = min(best, (time.perf_counter() - started) / (2000 * count))
    print(f"tracking cost per action: {best * 1e6:.2f} us")
    assert best < 10e-6
