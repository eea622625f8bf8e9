"""The numpy passes of a large schedule against the Python ones they stand in for: the
simulator's run against its event loop (the same result, to the bit, on every schedule kind
over torch's test grid, lowered or not, under several cost models; None, so the loop runs,
exactly where it must not answer), the columns' validity check against ``validate`` on
broken schedules, and their table against ``format_table``."""

from __future__ import annotations

import dataclasses

import pytest

from meshdbg.worker.pipelining import vectorised
from meshdbg.worker.pipelining.columns import Columns
from meshdbg.worker.pipelining.errors import ConstraintError, DeadlockError, ScheduleValidationError
from meshdbg.worker.pipelining.ir import Action, ActionType, Schedule, parse_action
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.render import format_table, schedule_table
from meshdbg.worker.pipelining.schedules import SCHEDULES, generate
from meshdbg.worker.pipelining.simulator import STEP_COSTS, Costs, Run, simulate
from meshdbg.worker.pipelining.validation import validate

COSTS = [Costs(), STEP_COSTS, Costs(forward=2, backward=3, send=0.5, recv=0.25),
         Costs(forward=3, backward_input=1.5, backward_weight=2, backward=3.5, send=0.125, recv=1)]
STAGES_PER_RANK = {"gpipe": (1,), "1f1b": (1,), "zbv": (2,), "zbv-greedy": (2,), "dualpipev": (2,)}


def grid(kind: str) -> list[Schedule]:
    """``kind`` on torch's test grid (p in 1, 2, 3, 4, 8; m from p - 1 to 3p), where it applies."""
    schedules = []
    for p in (1, 2, 3, 4, 8):
        for v in STAGES_PER_RANK.get(kind, (1, 2, 3)):
            for m in sorted({1, p - 1, p, p + 1, 2 * p, 2 * p + 2, 3 * p} - {0}):
                try:
                    schedules.append(generate(kind, p, v, m))
                except ConstraintError:
                    pass
    return schedules


@pytest.mark.parametrize("kind", SCHEDULES)
def test_the_numpy_run_is_the_event_loop_on_every_kind(kind: str) -> None:
    compared = 0
    for schedule in grid(kind):
        for variant in (schedule, lower(schedule)):
            for costs in COSTS:
                result = vectorised.simulate(variant, costs)
                if kind == "dualpipev":  # its overlapped steps: the loop's alone
                    assert result is None
                    continue
                assert result == Run(variant, costs).loop(), (kind, variant.ranks, variant.microbatches, costs)
                compared += 1
    assert kind == "dualpipev" or compared >= 40


def test_a_large_schedule_goes_the_numpy_way_with_the_same_times() -> None:
    schedule = generate("interleaved-1f1b", 16, 4, 256)  # 32,768 actions
    assert schedule.large
    result = simulate(schedule)
    assert isinstance(result.starts, vectorised.Times)  # the numpy run answered
    assert result == Run(schedule, Costs()).loop()
    assert result.starts[3] == Run(schedule, Costs()).loop().starts[3] and len(result.ends) == 16


def test_costs_floating_point_cannot_add_exactly_are_left_to_the_loop() -> None:
    schedule = lower(generate("1f1b", 4, 1, 8))
    assert vectorised.simulate(schedule, Costs(forward=0.1, backward=0.2)) is None
    assert vectorised.simulate(schedule, Costs(forward=0.5, backward=0.25)) is not None


def two_ranks(rank0: str, rank1: str) -> Schedule:
    return Schedule("hand-made", 1, 1, (0, 1), [[parse_action(t) for t in rank0.split()],
                                                 [parse_action(t) for t in rank1.split()]])


@pytest.mark.parametrize("costs", [Costs(), Costs(forward=0, backward=0, send=0, recv=0)])
def test_a_deadlock_is_left_to_the_loop_which_names_it(costs: Costs) -> None:
    """No fixed point (a cycle of waits) — with zero durations too, where one would settle."""
    schedule = two_ranks("0F0 0RECV_B0 0B0 0SEND_F0", "1RECV_F0 1F0 1B0 1SEND_B0")
    validate(schedule)
    assert vectorised.simulate(schedule, costs) is None
    with pytest.raises(DeadlockError):
        Run(schedule, costs).loop()


def broken(kind: str) -> list[Schedule]:
    """A valid lowered schedule of ``kind`` with one thing wrong in each."""
    good = lower(generate(kind, 2, 2, 4))
    first, second = good.actions

    def with_ranks(rank0: list, rank1: list, **changes: object) -> Schedule:
        return dataclasses.replace(good, actions=[rank0, rank1], **changes)

    return [
        with_ranks(first[1:], second),  # an action missing
        with_ranks(first + first[:1], second),  # one repeated
        with_ranks(first[1:], first[:1] + second),  # one on the wrong rank
        with_ranks(first + [Action(9, ActionType.F, 0)], second),  # a stage out of range
        with_ranks(first + [Action(0, ActionType.F, 7)], second),  # a microbatch out of range
        with_ranks([a for a in first if a.type is not ActionType.RECV_B], second),  # a RECV missing
        with_ranks(first + [Action(0, ActionType.SEND_B, 0)], second),  # a SEND with no peer stage
        with_ranks([Action(a.stage, ActionType.B, a.microbatch) if a.type is ActionType.W else a for a in first],
                   second),  # a W made a B
        dataclasses.replace(good, stage_to_rank=(0, 0, 1, 1)),  # placed elsewhere
    ]


@pytest.mark.parametrize("kind", ["interleaved-1f1b", "zb1p"])
def test_its_validity_check_agrees_with_validate(kind: str) -> None:
    assert Columns.of(lower(generate(kind, 2, 2, 4))).valid()  # type: ignore[union-attr]
    invalid = 0
    for schedule in broken(kind):
        try:
            validate(schedule)
        except ScheduleValidationError:
            invalid += 1
            assert not Columns.of(schedule).valid()  # type: ignore[union-attr]
            assert vectorised.simulate(schedule, Costs()) is None
        else:  # interleaved 1F1B has no W to make a B
            assert Columns.of(schedule).valid()  # type: ignore[union-attr]
    assert invalid >= len(broken(kind)) - 1


@pytest.mark.parametrize("kind", SCHEDULES)
def test_the_columns_table_is_format_table(kind: str) -> None:
    for schedule in grid(kind):
        for variant in (schedule, lower(schedule)):
            columns = variant.columns
            assert (columns is None) == (kind == "dualpipev")  # an Overlap: the lists' own table
            assert columns is None or columns.table() == format_table(variant.actions), (kind, variant.ranks)
            assert columns is None or columns.texts() == [list(map(str, rank)) for rank in variant.actions]


def test_a_large_schedules_table_comes_from_its_columns() -> None:
    schedule = generate("interleaved-1f1b", 16, 4, 256)
    assert schedule.columns is schedule.columns  # made once
    assert schedule_table(schedule) == format_table(schedule.actions)
    ragged = dataclasses.replace(schedule, actions=[[], schedule.actions[1][:5], *schedule.actions[2:]])
    assert ragged.columns.table() == format_table(ragged.actions)  # type: ignore[union-attr]
    odd = dataclasses.replace(schedule, actions=[[Action(10**12, ActionType.F, 3), Action(2, ActionType.B, 10**15)],
                                                 *schedule.actions[1:]])  # a broken schedule's table shows it too
    assert odd.columns.table() == format_table(odd.actions)  # type: ignore[union-attr]
    assert odd.columns.texts()[0] == ["1000000000000F3", "2B1000000000000000"]  # type: ignore[union-attr]
    empty = dataclasses.replace(schedule, actions=[[], []])
    assert empty.columns.table() == format_table([[], []]) == "step  rank 0  rank 1"  # type: ignore[union-attr]
