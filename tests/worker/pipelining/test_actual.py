"""Planned against actual on recorded times: fitted costs, the lost time put where it was lost,
the trace's actual actions the executed schedule's, and the chart that draws both."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from meshdbg.worker.pipelining.actual import RankStep, compare, describe
from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.picture import to_comparison_svg, to_trace
from meshdbg.worker.pipelining.schedules import generate
from meshdbg.worker.pipelining.simulator import Costs, simulate

SCHEDULE = lower(generate("1f1b", 3, 1, 4))
COSTS = Costs(forward=0.002, backward=0.004, send=0.0001, recv=0.0002)
T0 = 1_700_000_000.0  # a wall clock


def recorded(delay_rank: int | None = None, delay_index: int = 0, delay: float = 0.0) -> dict[int, RankStep]:
    """What the ranks would record if they ran as simulated, one action `delay` longer."""
    result = simulate(SCHEDULE, COSTS)
    steps = {}
    for rank in range(SCHEDULE.ranks):
        starts, ends = list(result.starts[rank]), list(result.ends[rank])
        if rank == delay_rank:
            ends[delay_index] += delay
            for later in range(delay_index + 1, len(starts)):
                starts[later] += delay
                ends[later] += delay
        steps[rank] = RankStep(T0 + 0.5 + rank * 1e-4, [s - rank * 1e-4 for s in starts],
                               [e - rank * 1e-4 for e in ends])
    return steps


def test_a_run_as_planned_fits_the_costs_it_ran_with_and_loses_nothing() -> None:
    comparison = compare(SCHEDULE, 7, recorded())
    assert comparison.costs.forward == pytest.approx(0.002) and comparison.costs.backward == pytest.approx(0.004)
    assert comparison.costs.recv == pytest.approx(0.0002) and comparison.costs.send == pytest.approx(0.0001)
    assert comparison.actual.makespan == pytest.approx(comparison.planned.makespan)
    assert comparison.bubble(comparison.actual) == pytest.approx(comparison.bubble(comparison.planned))
    assert max(loss.seconds for loss in comparison.losses) == pytest.approx(0, abs=1e-6)  # (wall-clock seconds carry ~0.2 us)


def test_the_time_lost_is_put_on_the_action_that_ran_long() -> None:
    index = [str(a) for a in SCHEDULE.actions[1]].index("1F2")
    comparison = compare(SCHEDULE, 7, recorded(1, index, 0.05))
    worst = comparison.losses[0]
    assert (worst.rank, worst.action) == (1, "1F2") and worst.seconds == pytest.approx(0.05, rel=0.05)
    assert comparison.lost_by_rank()[1] == pytest.approx(0.05, rel=0.05)
    lines = describe(comparison)
    assert lines[0].startswith("step 7: ") and "most lost: 1F2 on rank 1 " in lines[-1]
    assert lines[1].startswith("bubble as run / planned: rank 0 ")


def test_a_rank_without_its_step_or_with_another_list_is_refused() -> None:
    steps = recorded()
    with pytest.raises(ScheduleError, match="no recorded step for rank 2"):
        compare(SCHEDULE, 7, {r: s for r, s in steps.items() if r != 2})
    steps[0] = RankStep(steps[0].started, steps[0].starts[:-1], steps[0].ends[:-1])
    with pytest.raises(ScheduleError, match="rank 0 recorded"):
        compare(SCHEDULE, 7, steps)


def test_the_trace_and_the_chart_show_the_plan_and_the_run() -> None:
    comparison = compare(SCHEDULE, 7, recorded(1, 3, 0.01))
    trace = json.loads(json.dumps(to_trace(SCHEDULE, comparison.actual, unit_us=1e6, pid=1, process="as run")))
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    for rank, actions in enumerate(SCHEDULE.actions):
        assert [e["name"] for e in spans if e["tid"] == rank] == [str(a) for a in actions]
    assert {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "as run"}} in trace["traceEvents"]
    svg = to_comparison_svg(SCHEDULE, comparison.planned, comparison.actual, "heading",
                            (comparison.bubble(comparison.actual), comparison.bubble(comparison.planned)),
                            describe(comparison), frozenset({(1, 3)}))
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("planned (") for t in texts) and any(t.startswith("as run (") for t in texts)
    assert sum(t.startswith("bubble 0.") for t in texts) == 2 * SCHEDULE.ranks
    assert any(t.startswith("most lost: ") for t in texts)
    assert svg.count('stroke="#d62728"') == 1  # the marked action
