"""The simulator: timing, memory, validation failures and deadlock reports."""

import pytest

from meshdbg.worker.pipelining.errors import ConstraintError, DeadlockError, ScheduleValidationError
from meshdbg.worker.pipelining.ir import Schedule, parse_action
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.schedules import generate
from meshdbg.worker.pipelining.simulator import Costs, simulate, step_grid


def two_stage(rank0: str, rank1: str, microbatches: int = 1) -> Schedule:
    """Two stages on two ranks, from space-separated text forms."""
    return Schedule(
        kind="hand-made",
        stages_per_rank=1,
        microbatches=microbatches,
        stage_to_rank=(0, 1),
        actions=[[parse_action(t) for t in rank0.split()], [parse_action(t) for t in rank1.split()]],
    )


def test_deadlock_names_the_step_and_the_waiting_ranks() -> None:
    # Rank 0 waits for a gradient before it sends the forward that rank 1 waits for.
    schedule = two_stage("0F0 0RECV_B0 0B0 0SEND_F0", "1RECV_F0 1F0 1B0 1SEND_B0")
    with pytest.raises(DeadlockError) as info:
        simulate(schedule)
    message = str(info.value)
    assert "rank 0 waits at step 1 (0RECV_B0 needs 1SEND_B0)" in message
    assert "rank 1 waits at step 0 (1RECV_F0 needs 0SEND_F0)" in message
    assert info.value.waiting == {0: (1, "0RECV_B0", "1SEND_B0"), 1: (0, "1RECV_F0", "0SEND_F0")}


def test_a_rank_waiting_on_itself_is_a_deadlock() -> None:
    schedule = Schedule("hand-made", 1, 1, (0,), [[parse_action(t) for t in "0F0 0W0 0I0".split()]])
    with pytest.raises(DeadlockError, match=r"rank 0 waits at step 1 \(0W0 needs 0I/B0\)"):
        simulate(schedule)


def test_costs_set_the_timing() -> None:
    schedule = two_stage("0F0 0SEND_F0 0RECV_B0 0B0", "1RECV_F0 1F0 1B0 1SEND_B0")
    result = simulate(schedule, Costs(forward=2, backward=3, send=0.5, recv=0.25))
    # 0F0 [0,2], send [2,2.5], 1RECV_F0 [2.5,2.75], 1F0 [2.75,4.75], 1B0 [4.75,7.75],
    # 1SEND_B0 [7.75,8.25], 0RECV_B0 [8.25,8.5], 0B0 [8.5,11.5]
    assert result.makespan == 11.5
    assert result.starts[0] == [0, 2, 8.25, 8.5]
    assert result.ends[1] == [2.75, 4.75, 7.75, 8.25]
    assert result.bubble[0] == pytest.approx((11.5 - 5.75) / 11.5)


def test_peak_activations_count_f_until_w() -> None:
    schedule = Schedule("hand-made", 1, 2, (0,), [[parse_action(t) for t in "0F0 0F1 0I0 0I1 0W0 0W1".split()]])
    assert simulate(schedule).peak_activations == (2,)


@pytest.mark.parametrize(
    ("rank0", "rank1", "problem"),
    [
        ("0F0 0B0", "1F0", "stage 1 microbatch 0: F x1, B x0, I x0, W x0"),
        ("0F0 0B0 0B0", "1F0 1B0", "stage 0 microbatch 0: F x1, B x2"),
        ("0F0 0B0 1F0", "1B0", "rank 0 step 2: 1F0 belongs on rank 1"),
        ("0F0 0B0 0F1", "1F0 1B0", "rank 0 step 2: 0F1 is out of range"),
        ("0F0 0I0 0B0", "1F0 1B0", "B x1, I x1, W x0"),
        ("0F0 0SEND_F0 0B0", "1F0 1B0", "forward boundary to stage 1 has 1 sends and 0 recvs"),
        ("0F0 0B0 0SEND_B0", "1F0 1B0", "0SEND_B0 has no neighbour stage"),
    ],
)
def test_validation_reports_each_problem(rank0: str, rank1: str, problem: str) -> None:
    with pytest.raises(ScheduleValidationError) as info:
        simulate(two_stage(rank0, rank1))
    assert any(problem in p for p in info.value.problems), info.value.problems


def test_same_rank_stages_must_not_communicate() -> None:
    schedule = lower(generate("zbv", 2, 2, 2))  # stages 1 and 2 share rank 1
    bad = [list(rank) for rank in schedule.actions]
    bad[1].insert(0, parse_action("1SEND_F0"))
    with pytest.raises(ScheduleValidationError, match="1SEND_F0 has no neighbour stage on another rank"):
        simulate(Schedule(schedule.kind, 2, 2, schedule.stage_to_rank, bad))


def test_negative_cost_is_rejected() -> None:
    with pytest.raises(ConstraintError, match=r"backward=-1"):
        Costs(backward=-1)


def test_empty_schedule_has_zero_makespan() -> None:
    result = simulate(Schedule("hand-made", 1, 1, (), []))
    assert (result.makespan, result.bubble) == (0.0, ())


def test_an_overlap_is_one_step_that_waits_for_both_halves() -> None:
    """(1F1;1B0) on rank 1 starts when 1F1's input and 1B0's forward are there, lasts F + B,
    and both halves' results exist at its end; lowering adds nothing to that timing."""
    schedule = Schedule("hand-made", 1, 2, (0, 1), [
        [parse_action(t) for t in "0F0 0F1 0B0 0B1".split()],
        [parse_action(t) for t in "1F0 (1F1;1B0)OVERLAP_F_B 1B1".split()],
    ])
    result = simulate(schedule)
    assert result.starts[1] == [1, 2, 5] and result.ends[1] == [2, 5, 7]
    assert result.starts[0] == [0, 1, 5, 7]  # 0B0 waits for the overlap's end, not 1B0's own
    assert result.peak_activations == (2, 2)
    assert simulate(lower(schedule)).makespan == result.makespan == 9


def test_a_deadlock_inside_an_overlap_names_the_overlap() -> None:
    schedule = Schedule("hand-made", 1, 2, (0, 1), [
        [parse_action(t) for t in "0F0 0B0 0F1 0B1".split()],
        [parse_action(t) for t in "(1F1;1B0)OVERLAP_F_B 1F0 1B1".split()],
    ])
    with pytest.raises(DeadlockError, match=r"rank 1 waits at step 0 \(\(1F1;1B0\)OVERLAP_F_B needs 0F1\)"):
        simulate(schedule)


def test_an_overlap_can_cost_less_than_its_halves() -> None:
    schedule = Schedule("hand-made", 1, 2, (0, 1), [
        [parse_action(t) for t in "0F0 0F1 0B0 0B1".split()],
        [parse_action(t) for t in "1F0 (1F1;1B0)OVERLAP_F_B 1B1".split()],
    ])
    assert simulate(schedule, Costs(overlap=2.5)).ends[1] == [2, 4.5, 6.5]
    with pytest.raises(ConstraintError, match="overlap=-1"):
        Costs(overlap=-1)


def test_step_grid_puts_each_action_at_the_first_step_after_what_it_needs() -> None:
    """1F1B on 3 ranks, 3 microbatches, worked by hand: every action one step; an F waits
    for the stage before, a B for the stage after (the last stage's for its own F)."""
    grid = [[str(a) if a else "." for a in row] for row in step_grid(generate("1f1b", 3, 1, 3))]
    assert grid == [
        "0F0 0F1 0F2 . . 0B0 . 0B1 . 0B2".split(),
        ". 1F0 1F1 . 1B0 1F2 1B1 . 1B2".split(),
        ". . 2F0 2B0 2F1 2B1 2F2 2B2".split(),
    ]
