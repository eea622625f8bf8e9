"""Every kind over the grid p 1-8, v 1-4, m 1-4p (where allowed): valid, deadlock-free, counted."""

from collections import Counter
from fractions import Fraction

import pytest

from meshdbg.worker.pipelining.errors import ConstraintError
from meshdbg.worker.pipelining.ir import ActionType, Schedule, parts
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.schedules import SCHEDULES, check_constraints, generate
from meshdbg.worker.pipelining.simulator import Costs, simulate

T = ActionType
UNIT = Costs(backward=1.0)


def grid(kind: str) -> list[tuple[int, int, int]]:
    """Every (p, v, m) of the grid that ``kind`` accepts."""
    cases = []
    for p in range(1, 9):
        for v in range(1, 5):
            for m in range(1, 4 * p + 1):
                try:
                    check_constraints(kind, p, v, m)
                except ConstraintError:
                    continue
                cases.append((p, v, m))
    return cases


def check_counts(schedule: Schedule) -> None:
    counts = Counter(half.type for rank in schedule.actions for action in rank for half in parts(action))
    pairs = schedule.num_stages * schedule.microbatches
    assert counts[T.F] == pairs
    assert counts[T.B] + counts[T.I] == pairs
    assert counts[T.I] == counts[T.W]
    crossings = sum(
        schedule.stage_to_rank[s] != schedule.stage_to_rank[s + 1] for s in range(schedule.num_stages - 1)
    )
    for comm in (T.SEND_F, T.RECV_F, T.SEND_B, T.RECV_B):
        assert counts[comm] == crossings * schedule.microbatches


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_every_grid_point_validates_and_runs(kind: str) -> None:
    cases = grid(kind)
    assert cases, f"{kind} accepts nothing on the grid"
    for p, v, m in cases:
        schedule = generate(kind, p, v, m)
        assert schedule.ranks == p and schedule.num_stages == p * v
        lowered = lower(schedule)
        check_counts(lowered)
        plain, timed = simulate(schedule), simulate(lowered)  # validate + no deadlock
        assert timed.makespan == plain.makespan, (kind, p, v, m)  # free comm: lowering costs nothing
        simulate(lower(schedule, merge=True))


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("costs", [UNIT, Costs()], ids=["F=B=1", "F=1,B=2"])
def test_gpipe_and_1f1b_bubble_is_p_minus_1_over_m_plus_p_minus_1(kind: str, costs: Costs) -> None:
    for p, _, m in grid(kind):
        result = simulate(generate(kind, p, 1, m), costs)
        for bubble in result.bubble:
            assert bubble == pytest.approx((p - 1) / (m + p - 1)), (kind, p, m)


def test_1f1b_holds_fewer_activations_than_gpipe() -> None:
    p, m = 4, 8
    assert simulate(generate("gpipe", p, 1, m)).peak_activations == (m,) * p
    assert simulate(generate("1f1b", p, 1, m)).peak_activations == tuple(p - r for r in range(p))


def test_tight_interleaved_bubble_is_p_minus_1_over_v_m_of_ideal() -> None:
    checked = 0
    for p, v, m in grid("interleaved-1f1b-tight"):
        ideal = v * m * 3  # F=1 + B=2 per stage and microbatch on each rank
        makespan = simulate(generate("interleaved-1f1b-tight", p, v, m)).makespan
        assert Fraction(int(makespan) - ideal, ideal) == Fraction(p - 1, v * m), (p, v, m)
        checked += 1
    assert checked > 50


def test_zero_bubble_kinds_beat_1f1b() -> None:
    """Deferring W must shrink the bubble below 1F1B's (p-1) * (F + B)."""
    p, m = 4, 16
    ideal = 3 * m
    one_f_one_b = simulate(generate("1f1b", p, 1, m)).makespan - ideal
    assert one_f_one_b == (p - 1) * 3
    assert simulate(generate("zb1p", p, 1, m)).makespan - ideal < one_f_one_b
    assert simulate(generate("zbv", p, 2, m)).makespan - 2 * ideal < one_f_one_b / 2


def test_dora_dfs_is_interleaved_1f1b() -> None:
    assert generate("dora-dfs", 4, 2, 8).actions == generate("interleaved-1f1b", 4, 2, 8).actions


def test_v_shaped_kinds_place_stages_in_a_v() -> None:
    for kind in ("zbv", "zbv-greedy", "dualpipev"):
        assert generate(kind, 3, 2, 6).stage_to_rank == (0, 1, 2, 2, 1, 0)


def test_tight_interleaved_holds_less_and_loses_with_comm_cost() -> None:
    """The issue's figures: peak 8 against 11 on rank 0, makespan 57 for both with free
    communication, 92 against 89 with send = recv = 0.5 (p = 4, v = 2, m = 8)."""
    torch_order, tight = (lower(generate(kind, 4, 2, 8)) for kind in ("interleaved-1f1b", "interleaved-1f1b-tight"))
    assert simulate(torch_order).peak_activations[0] == 11
    assert simulate(tight).peak_activations[0] == 8
    assert simulate(torch_order).makespan == simulate(tight).makespan == 57
    comm = Costs(send=0.5, recv=0.5)
    assert (simulate(torch_order, comm).makespan, simulate(tight, comm).makespan) == (89, 92)


def test_dualpipev_overlaps_forward_and_backward() -> None:
    schedule = generate("dualpipev", 2, 2, 4)
    assert [str(a) for a in schedule.actions[0]] == [
        "0F0", "0F1", "0F2", "3F0", "3I0", "3W0", "3F1", "(0F3;3B1)OVERLAP_F_B", "(3F2;0B0)OVERLAP_F_B",
        "3B2", "(3F3;0B1)OVERLAP_F_B", "3B3", "0I2", "0W2", "0I3", "0W3",
    ]


@pytest.mark.parametrize(
    ("kind", "p", "v", "m", "rule"),
    [
        ("interleaved-1f1b-tight", 4, 2, 6, "multiple of ranks"),
        ("interleaved-1f1b", 2, 2, 7, r"rounds = max\(1, microbatches // ranks\) = 3, so microbatches must be a multiple of 3"),
        ("zb1p", 4, 2, 9, "multiple of 2"),
        ("dualpipev", 4, 2, 7, r"at least as many microbatches as stages \(2 \* ranks = 8\)"),
        ("zbv-greedy", 4, 3, 8, "exactly two stages per rank"),
        ("gpipe", 4, 2, 8, "one stage per rank"),
        ("1f1b", 4, 3, 8, "one stage per rank"),
        ("zbv", 4, 1, 8, "exactly two stages per rank"),
        ("zb1p", 0, 1, 8, "ranks must be at least 1"),
        ("1f1b", 2, 1, 0, "microbatches must be at least 1"),
        ("pipedream", 2, 1, 2, "unknown schedule kind 'pipedream'"),
    ],
)
def test_constraints_name_the_rule(kind: str, p: int, v: int, m: int, rule: str) -> None:
    with pytest.raises(ConstraintError, match=rule):
        generate(kind, p, v, m)
