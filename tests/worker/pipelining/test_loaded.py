"""Schedules read from bare per-rank lists: the placement comes from the lists."""

import pytest

from meshdbg.worker.pipelining.errors import ScheduleValidationError
from meshdbg.worker.pipelining.ir import parse_action
from meshdbg.worker.pipelining.loaded import as_schedule
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.render import dump_csv, load_csv
from meshdbg.worker.pipelining.schedules import generate
from meshdbg.worker.pipelining.simulator import simulate


def lists(*ranks: str) -> list[list]:
    return [[parse_action(t) for t in rank.split()] for rank in ranks]


@pytest.mark.parametrize(("kind", "p", "v", "m"), [
    ("interleaved-1f1b", 3, 2, 5), ("zbv", 3, 2, 4), ("dualpipev", 2, 2, 5), ("1f1b", 4, 1, 5),
])
def test_placement_and_sizes_come_from_the_lists(kind: str, p: int, v: int, m: int) -> None:
    schedule = lower(generate(kind, p, v, m))
    loaded = as_schedule(load_csv(dump_csv(schedule.actions)))
    assert (loaded.stage_to_rank, loaded.stages_per_rank, loaded.microbatches) == (
        schedule.stage_to_rank, schedule.stages_per_rank, schedule.microbatches)
    assert loaded.actions == schedule.actions
    assert simulate(loaded).makespan == simulate(schedule).makespan


def test_a_stage_on_two_ranks_names_both() -> None:
    with pytest.raises(ScheduleValidationError, match=r"rank 1 step 1: 0B0 runs stage 0, which rank 0 runs \(0F0 at its step 0\)"):
        as_schedule(lists("0F0 1B0", "1F0 0B0"))


def test_a_stage_on_no_rank_is_named() -> None:
    with pytest.raises(ScheduleValidationError, match=r"stage 1 has no action on any rank \(stages run 0..2\)"):
        as_schedule(lists("0F0 0B0", "2F0 2B0"))


def test_same_rank_send_recv_are_dropped() -> None:
    """torch lowers the hand-over between two stages of one rank too; meshdbg does not."""
    loaded = as_schedule(lists("0F0 0SEND_F0 1RECV_F0 1F0 1B0 1SEND_B0 0RECV_B0 0B0"))
    assert [str(a) for a in loaded.actions[0]] == ["0F0", "1F0", "1B0", "0B0"]
