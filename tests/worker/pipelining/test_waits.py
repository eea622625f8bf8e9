"""The stall analysis on plain statuses: who waits for whom, and the one cause named."""

from __future__ import annotations

from meshdbg.wire.vocabulary import State
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.schedules import generate
from meshdbg.worker.pipelining.waits import STALL_AFTER_S, RankStatus, find_stall

SCHEDULE = lower(generate("1f1b", 3, 1, 4))
LONG = STALL_AFTER_S + 1


def at(rank: int, action: str, state: State = State.RUNNING, since_s: float = LONG, **extra: object) -> RankStatus:
    """Rank `rank` of SCHEDULE at `action` of step 5."""
    actions = tuple(map(str, SCHEDULE.actions[rank]))
    return RankStatus(rank, state, stage_to_rank=SCHEDULE.stage_to_rank, actions=actions, step=5,
                      position=actions.index(action), in_step=True, since_s=since_s, **extra)


def test_short_waits_are_the_pipelines_rhythm_not_a_stall() -> None:
    stall = find_stall([at(0, "0F1"), at(1, "1RECV_F1", since_s=0.1), at(2, "2RECV_F0", since_s=0.1)])
    assert set(stall.waits) == {1, 2} and stall.cause == ""
    assert stall.summary.startswith("no stall")


def test_the_chain_of_waits_ends_at_the_slow_rank() -> None:
    stall = find_stall([at(0, "0F1"), at(1, "1RECV_F1"), at(2, "2RECV_F1")])
    assert stall.cause.startswith("rank 0 is slow: in 0F1 for ")
    assert stall.held == (1, 2)
    assert [str(link) for link in stall.links] == ["rank 1 waits in 1RECV_F1 for rank 0's 0SEND_F1"]


def test_a_crashed_neighbour_leads_on_to_the_rank_that_exited() -> None:
    gone = RankStatus(1, State.EXITED, why="exited (SIGKILL)")
    crashed = at(2, "2RECV_F1", State.STOPPED, why="in a post-mortem session at runtime.py:9", crashed=True)
    stall = find_stall([at(0, "0RECV_B0"), gone, crashed])
    assert stall.cause == "rank 1 exited (SIGKILL)" and stall.held == (0, 2)


def test_data_already_sent_is_in_flight_not_a_stall_of_the_sender() -> None:
    stall = find_stall([at(0, "0F2"), at(1, "1RECV_F1")])
    assert stall.cause == "rank 0 already ran 0SEND_F1: its data is in flight"
