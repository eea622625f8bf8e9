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

from operator import add
from typing import cast

from meshdbg.worker.pipelining.bulk import type_of
from meshdbg.worker.pipelining.errors import ScheduleValidationError
from meshdbg.worker.pipelining.ir import Action, ActionType, Schedule, has_overlaps, parts

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
    if schedule.large and (columns := schedule.columns) is not None:  # read off its arrays, no Action made
        return columns.lowered
    return any(not _COMM.isdisjoint(map(type_of, rank_actions)) for rank_actions in schedule.actions)


def crosses_ranks(schedule: Schedule, stage: int) -> bool:
    """True when the boundary between ``stage`` and ``stage + 1`` joins two ranks."""
    return schedule.stage_to_rank[stage] != schedule.stage_to_rank[stage + 1]


def validate(schedule: Schedule) -> None:
    """Raise ``ScheduleValidationError`` listing what is wrong; return None if all is well."""
    problems: list[str] = []
    counts = _Counts(schedule)
    _check_placement(schedule, counts, problems)
    _check_counts(schedule, counts, is_lowered(schedule), problems)
    if problems:
        raise ScheduleValidationError(problems)


class _Counts:
    """How often each (type, stage, microbatch) occurs, in one flat list of ints.

    The count of (t, s, mb) sits at ``index(t, s) + mb``, ``index(t, s) = (t's position
    in ActionType * stages + s) * microbatches``: one add per action, no tuple keys.
    """

    def __init__(self, schedule: Schedule) -> None:
        self.microbatches = schedule.microbatches
        self.block = schedule.num_stages * schedule.microbatches
        self.position = {action_type: position for position, action_type in enumerate(ActionType)}
        self.flat = [0] * (len(ActionType) * self.block)

    def index(self, action_type: ActionType, stage: int) -> int:
        """Where the counts of (``action_type``, ``stage``, microbatch 0..m-1) start."""
        return self.position[action_type] * self.block + stage * self.microbatches

    def of(self, action_type: ActionType) -> list[int]:
        """The counts of ``action_type``, stage by stage (index ``stage * m + microbatch``)."""
        start = self.index(action_type, 0)
        return self.flat[start : start + self.block]

    def at(self, action_type: ActionType, stage: int) -> list[int]:
        """The counts of ``action_type`` on ``stage``, one per microbatch."""
        start = self.index(action_type, stage)
        return self.flat[start : start + self.microbatches]


def _check_placement(schedule: Schedule, counts: _Counts, problems: list[str]) -> None:
    """Check each action's range and rank, and count it (in ``counts``) when in range.

    One pass: per rank, ``where[type][stage]`` is the action's count index if it may
    stand on this rank (its stage is the rank's, a SEND/RECV has its peer) and -1 if not.
    """
    num_stages, microbatches, stage_to_rank = schedule.num_stages, schedule.microbatches, schedule.stage_to_rank
    flat = counts.flat
    overlaps = has_overlaps(schedule.actions)
    for rank, rank_actions in enumerate(schedule.actions):
        where = {action_type: [-1] * num_stages for action_type in ActionType}
        for stage in (s for s in range(num_stages) if stage_to_rank[s] == rank):
            for action_type in ActionType:
                if action_type not in _COMM or _comm_has_peer(schedule, Action(stage, action_type, 0)):
                    where[action_type][stage] = counts.index(action_type, stage)
        steps = (
            [(step, half) for step, entry in enumerate(rank_actions) for half in parts(entry)]
            if overlaps
            else enumerate(cast(list[Action], rank_actions))  # no overlaps: each entry is an Action
        )
        for step, action in steps:
            stage, action_type, microbatch = action
            if 0 <= stage < num_stages and 0 <= microbatch < microbatches and (index := where[action_type][stage]) >= 0:
                flat[index + microbatch] += 1
            elif len(problems) < _MAX_PROBLEMS:
                problems.append(f"rank {rank} step {step}: {action} {_misplacement(schedule, action)}")


def _misplacement(schedule: Schedule, action: Action) -> str:
    """Why ``action`` cannot stand where it stands (the tail of a problem message)."""
    if not (0 <= action.stage < schedule.num_stages and 0 <= action.microbatch < schedule.microbatches):
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


def _wrong_count(stage: int, microbatch: int, f: int, b: int, i: int, w: int) -> str:
    """What is missing or repeated for one (stage, microbatch), as actions: ``1B0 missing``."""
    def name(kind: str) -> str:
        return f"{stage}{kind}{microbatch}"

    if f != 1:
        return f"{name('F')} {'missing' if f == 0 else 'repeated'}"
    if b + i == 0:
        return f"{name('I')} missing" if w else f"{name('B')} (or {name('I')} and {name('W')}) missing"
    if b + i > 1:
        return f"backward of {name('F')} repeated"
    if i > w:
        return f"{name('W')} missing"
    return f"{name('W')} repeated" if i else f"{name('W')} after a full {name('B')}"


def _check_counts(schedule: Schedule, counts: _Counts, lowered: bool, problems: list[str]) -> None:
    """Check the exactly-once rules for compute, and send/recv pairing when lowered."""
    T = ActionType
    microbatches = schedule.microbatches
    forwards, fulls, inputs, weights = (counts.of(t) for t in (T.F, T.B, T.I, T.W))
    owner = schedule.stage_to_rank
    ones = [1] * counts.block
    # The common case, all well, is decided by list comparisons in C; else find the culprits.
    if not (forwards == ones and inputs == weights and list(map(add, fulls, inputs)) == ones):
        for index, (f, b, i, w) in enumerate(zip(forwards, fulls, inputs, weights)):
            # One F, and either one B (0 I, 0 W) or one I and one W (0 B).
            if f == 1 and b + i == 1 and i == w:
                continue
            stage, microbatch = divmod(index, microbatches)
            problems.append(
                f"rank {owner[stage]}: {_wrong_count(stage, microbatch, f, b, i, w)}; "
                f"stage {stage} microbatch {microbatch}: F x{f}, B x{b}, I x{i}, W x{w}; "
                f"expected one F and then one B, or one I and one W"
            )
            if len(problems) >= _MAX_PROBLEMS:
                return
    if not lowered:
        return
    expected = [1] * microbatches
    for stage in range(schedule.num_stages - 1):
        if not crosses_ranks(schedule, stage):
            continue
        for name, sends, recvs in (
            ("forward", counts.at(T.SEND_F, stage), counts.at(T.RECV_F, stage + 1)),
            ("backward", counts.at(T.SEND_B, stage + 1), counts.at(T.RECV_B, stage)),
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
