"""A ``Schedule`` from bare per-rank lists (a CSV written by torch, Monarch or meshdbg).

The lists say which rank runs each action, so the placement is read off them: stage s
belongs to the rank whose list holds its actions, and a stage that shows up on two ranks,
or a stage between others that shows up on none, is an error naming the rank and the
action. torch's lowering also puts SEND/RECV between stages of the same rank (which hand
data over in memory); those are dropped, so the result means what meshdbg's own
schedules mean. Whether every action is there exactly once, and in an order that can
finish, is then ``validate``'s and the simulator's to say.
"""

from __future__ import annotations

from meshdbg.worker.pipelining.errors import ScheduleValidationError
from meshdbg.worker.pipelining.ir import ActionType, AnyAction, Schedule, parts

T = ActionType
# For each SEND/RECV type: the stage on the other end, as an offset.
_PEER = {T.SEND_F: 1, T.RECV_F: -1, T.SEND_B: -1, T.RECV_B: 1}


def as_schedule(actions: list[list[AnyAction]], kind: str = "loaded") -> Schedule:
    """The schedule the lists describe; raises ``ScheduleValidationError`` on a bad placement."""
    owner: dict[int, tuple[int, int, AnyAction]] = {}  # stage -> where it was first seen
    problems: list[str] = []
    microbatches = 0
    for rank, rank_actions in enumerate(actions):
        for step, entry in enumerate(rank_actions):
            for action in parts(entry):
                microbatches = max(microbatches, action.microbatch + 1)
                first = owner.setdefault(action.stage, (rank, step, entry))
                if first[0] != rank and len(problems) < 5:
                    problems.append(
                        f"rank {rank} step {step}: {entry} runs stage {action.stage}, "
                        f"which rank {first[0]} runs ({first[2]} at its step {first[1]})"
                    )
    stages = max(owner, default=-1) + 1
    problems += [f"stage {s} has no action on any rank (stages run 0..{stages - 1})" for s in range(stages) if s not in owner]
    if problems:
        raise ScheduleValidationError(problems)
    placement = tuple(owner[s][0] for s in range(stages))
    kept = [[a for a in rank_actions if not _same_rank_comm(a, placement)] for rank_actions in actions]
    per_rank = max((placement.count(rank) for rank in range(len(actions))), default=0)
    return Schedule(kind, per_rank, microbatches, placement, kept)


def _same_rank_comm(action: AnyAction, placement: tuple[int, ...]) -> bool:
    """True for a SEND/RECV whose peer stage runs on the same rank."""
    if not action.type.is_comm:
        return False
    peer = action.stage + _PEER[action.type]  # type: ignore[union-attr]
    return 0 <= peer < len(placement) and placement[peer] == placement[action.stage]  # type: ignore[union-attr]
