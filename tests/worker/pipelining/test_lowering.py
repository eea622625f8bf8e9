"""Lowering adds SEND/RECV only across ranks; merging turns I+W into B."""

from meshdbg.worker.pipelining.ir import ActionType, Schedule, parse_action
from meshdbg.worker.pipelining.lowering import lower, merge_backward
from meshdbg.worker.pipelining.schedules import generate

T = ActionType


def texts(schedule: Schedule) -> list[list[str]]:
    return [[str(a) for a in rank] for rank in schedule.actions]


def test_recv_before_and_send_after_the_compute() -> None:
    lowered = lower(generate("gpipe", 2, 1, 1))
    assert texts(lowered) == [
        ["0F0", "0SEND_F0", "0RECV_B0", "0B0"],
        ["1RECV_F0", "1F0", "1B0", "1SEND_B0"],
    ]


def test_no_comm_between_stages_on_one_rank() -> None:
    for schedule in (generate("interleaved-1f1b", 1, 3, 2), generate("zbv", 1, 2, 2)):
        assert lower(schedule).actions == schedule.actions
    rank2 = lower(generate("zbv", 3, 2, 3)).actions[2]  # stages 2 and 3 both on rank 2
    inner = {(2, T.SEND_F), (2, T.RECV_B), (3, T.RECV_F), (3, T.SEND_B)}
    assert [a for a in rank2 if (a.stage, a.type) in inner] == []
    assert any(a.type.is_comm for a in rank2)


def test_merge_only_adjacent_i_and_its_own_w() -> None:
    schedule = Schedule(
        "hand-made", 1, 2, (0,), [[parse_action(t) for t in "0F0 0F1 0I0 0W0 0I1 0F0 0W1".split()]]
    )
    assert texts(merge_backward(schedule)) == [["0F0", "0F1", "0B0", "0I1", "0F0", "0W1"]]


def test_lower_with_merge_merges_first() -> None:
    schedule = generate("zbv", 2, 2, 4)
    merged = lower(schedule, merge=True)
    assert any(a.type is T.B for rank in merged.actions for a in rank)
    assert merged.actions == lower(merge_backward(schedule)).actions
