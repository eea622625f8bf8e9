"""Static checks of a schedule: every action in range, on the right rank, exactly once.

``validate`` checks what can be seen without running the lists: each (stage, microbatch)
has one forward and either one ``B`` or one ``I`` and one ``W``; every action sits on the
rank that owns its stage; every SEND has its RECV on the neighbouring stage's rank, and
no SEND/RECV joins two stages of the same rank. Whether the order can finish (and how
fast) is the simulator's job; it calls ``validate`` first.

A schedule counts as *lowered* when it holds any SEND/RECV; a lowered schedule must have
the pair for every forward and backward that crosses ranks.
"""

from __future__ import annotations

from worker.pipelining.errors import ScheduleValidationError
from worker.pipelining.ir import Action, ActionType, Schedule

_MAX_PROBLEMS = 20

_COMM = frozenset(t for t in ActionType if t.is_comm)

# For each SEND/RECV type: which neighbour stage the data goes to or comes from.
_PEER_OFFSET = {
    ActionType.SEND_F: 1,
    ActionType.RECV_F: -1,
    ActionType.SEND_B: -1,
    ActionType.RECV_B: 1,
}


def is_lowered(schedule: Schedule) -> bool:
    """True when the lists carry SEND/RECV actions (see the module docstring)."""
    return any(action.type.is_comm for rank_actions in schedule.actions for action in rank_actions)


def crosses_ranks(schedule: Schedule, stage: int) -> bool:
    """True when the boundary between ``stage`` and ``stage + 1`` joins two ranks."""
    return schedule.stage_to_rank[stage] != schedule.stage_to_rank[stage + 1]


def validate(schedule: Schedule) -> None:
    """Raise ``ScheduleValidationError`` listing what is wrong; return None if all is well."""
    problems: list[str] = []
    counts = {action_type: [0] * (schedule.num_stages * schedule.microbatches) for action_type in ActionType}
    _check_placement(schedule, counts, problems)
    _check_counts(schedule, counts, is_lowered(schedule), problems)
    if problems:
        raise ScheduleValidationError(problems)


def _check_placement(schedule: Schedule, counts: dict[ActionType, list[int]], problems: list[str]) -> None:
    """Check each action's range and rank, and count it (in ``counts``) when in range."""
    num_stages, microbatches, stage_to_rank = schedule.num_stages, schedule.microbatches, schedule.stage_to_rank
    for rank, rank_actions in enumerate(schedule.actions):
        for step, action in enumerate(rank_actions):
            stage, action_type, microbatch = action
            in_range = 0 <= stage < num_stages and 0 <= microbatch < microbatches
            if in_range and stage_to_rank[stage] == rank and (action_type not in _COMM or _comm_has_peer(schedule, action)):
                counts[action_type][stage * microbatches + microbatch] += 1
            elif len(problems) < _MAX_PROBLEMS:
                problems.append(f"rank {rank} step {step}: {action} {_misplacement(schedule, action, in_range)}")


def _misplacement(schedule: Schedule, action: Action, in_range: bool) -> str:
    """Why ``action`` cannot stand where it stands (the tail of a problem message)."""
    if not in_range:
        return (
            f"is out of range (stages 0..{schedule.num_stages - 1}, "
            f"microbatches 0..{schedule.microbatches - 1})"
        )
    if action.type in _COMM and not _comm_has_peer(schedule, action):
        return "has no neighbour stage on another rank to send to or receive from"
    return f"belongs on rank {schedule.stage_to_rank[action.stage]}"


def _comm_has_peer(schedule: Schedule, action: Action) -> bool:
    """True when ``action`` (a SEND/RECV) joins its stage to a stage on another rank."""
    peer = action.stage + _PEER_OFFSET[action.type]
    if not 0 <= peer < schedule.num_stages:
        return False
    return schedule.stage_to_rank[peer] != schedule.stage_to_rank[action.stage]


def _check_counts(
    schedule: Schedule, counts: dict[ActionType, list[int]], lowered: bool, problems: list[str]
) -> None:
    """Check the exactly-once rules for compute, and send/recv pairing when lowered."""
    T = ActionType
    microbatches = schedule.microbatches
    per_type = zip(counts[T.F], counts[T.B], counts[T.I], counts[T.W])
    for index, (forwards, fulls, inputs, weights) in enumerate(per_type):
        # One F, and either one B (0 I, 0 W) or one I and one W (0 B).
        if forwards == 1 and fulls + inputs == 1 and inputs == weights:
            continue
        where = f"stage {index // microbatches} microbatch {index % microbatches}"
        problems.append(
            f"{where}: F x{forwards}, B x{fulls}, I x{inputs}, W x{weights}; "
            "expected one F and then one B, or one I and one W"
        )
        if len(problems) >= _MAX_PROBLEMS:
            return
    if not lowered:
        return
    expected = [1] * microbatches
    for stage in range(schedule.num_stages - 1):
        if not crosses_ranks(schedule, stage):
            continue
        here = slice(stage * microbatches, (stage + 1) * microbatches)
        there = slice((stage + 1) * microbatches, (stage + 2) * microbatches)
        for name, sends, recvs in (
            ("forward", counts[T.SEND_F][here], counts[T.RECV_F][there]),
            ("backward", counts[T.SEND_B][there], counts[T.RECV_B][here]),
        ):
            if sends == expected and recvs == expected:
                continue
            for microbatch, pair in enumerate(zip(sends, recvs)):
                if pair != (1, 1):
                    problems.append(
                        f"stage {stage} microbatch {microbatch}: {name} boundary to stage {stage + 1} "
                        f"has {pair[0]} sends and {pair[1]} recvs, expected one of each"
                    )
            if len(problems) >= _MAX_PROBLEMS:
                return
