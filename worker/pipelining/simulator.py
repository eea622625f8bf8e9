"""Run per-rank action lists against a cost model: timing, bubbles, memory, deadlocks.

Each rank executes its list in order; an action starts when its rank is free and every
action it depends on has finished:

* ``F`` of stage s after ``F`` of stage s-1 (same microbatch);
* ``I``/``B`` of stage s after its own ``F`` and after ``I``/``B`` of stage s+1;
* ``W`` after its ``I``;
* in a lowered schedule, a compute action whose neighbour stage is on another rank also
  waits for its ``RECV``; a ``SEND`` waits for the compute it sends, a ``RECV`` for its
  ``SEND``. Sends never block (buffered), so only the order of the lists can deadlock.

An ``Overlap`` is one step, as in the runtime (and torch's), which runs its forward, then
its backward: it starts once both halves could, lasts as long as the two together (or
``Costs.overlap``, for a model where the overlap hides some of either), and
what either half produces is there at its end (lowering puts both halves' SENDs after
it). For activations it counts as the forward's +1, then the backward's -1.

Activations: ``F`` of (stage, microbatch) takes one unit on its rank, and the ``B`` or
``W`` of the same pair gives it back; ``peak_activations`` is the most a rank held.
A rank's bubble ratio is its idle time over the makespan.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from itertools import accumulate
from operator import sub
from typing import NamedTuple

from meshdbg.worker.pipelining.bulk import paused_gc, type_of
from meshdbg.worker.pipelining.errors import ConstraintError, DeadlockError
from meshdbg.worker.pipelining.ir import Action, ActionType, AnyAction, Overlap, Schedule, flatten, has_overlaps, parts
from meshdbg.worker.pipelining.validation import crosses_ranks, is_lowered, validate

T = ActionType


@dataclass(frozen=True)
class Costs:
    """Duration of each action type in arbitrary time units (all must be >= 0)."""

    forward: float = 1.0
    backward_input: float = 1.0
    backward_weight: float = 1.0
    backward: float = 2.0
    send: float = 0.0
    recv: float = 0.0
    overlap: float | None = None  # an OVERLAP_F_B step; None: as long as its two halves together

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None and field.name == "overlap":
                continue  # unset: its halves together
            if not value >= 0:
                raise ConstraintError(f"cost {field.name}={value!r} must be a number >= 0")

    def of_action(self, action: AnyAction) -> float:
        """The duration of ``action``; an ``Overlap`` lasts ``overlap``, else its two halves together."""
        if isinstance(action, Overlap) and self.overlap is not None:
            return self.overlap
        return sum(self.of(half.type) for half in parts(action))

    def of(self, action_type: ActionType) -> float:
        """The duration of one action of ``action_type`` (not ``OVERLAP_F_B``: see ``of_action``)."""
        return {
            T.F: self.forward,
            T.I: self.backward_input,
            T.W: self.backward_weight,
            T.B: self.backward,
            T.SEND_F: self.send,
            T.SEND_B: self.send,
            T.RECV_F: self.recv,
            T.RECV_B: self.recv,
        }[action_type]


@dataclass(frozen=True)
class SimResult:
    """What a simulation found; ``starts[r][k]``/``ends[r][k]`` time rank r's k-th action."""

    makespan: float
    bubble: tuple[float, ...]
    peak_activations: tuple[int, ...]
    starts: Sequence[list[float]]  # a list, or the vectorised run's rows, made a list each when read
    ends: Sequence[list[float]]


# Finished-event slots: each (slot, stage, microbatch) has one end time. Nothing waits
# for a W, but it gets a slot too, so that every action records its end the same way.
_SLOT_NAME = ("F", "I/B", "SEND_F", "SEND_B", "RECV_F", "RECV_B", "W")
_SLOT_OF = {T.F: 0, T.I: 1, T.B: 1, T.SEND_F: 2, T.SEND_B: 3, T.RECV_F: 4, T.RECV_B: 5, T.W: 6}
_ACTIVATION_CHANGE = {action_type: 0 for action_type in ActionType} | {T.F: 1, T.W: -1, T.B: -1}
_NOT_DONE = -1.0


def bubble_ratios(makespan: float, busy: Iterable[float]) -> tuple[float, ...]:
    """Each rank's idle time over the makespan, from its busy time."""
    return tuple((makespan - b) / makespan if makespan > 0 else 0.0 for b in busy)


def activation_change(action_type: ActionType) -> int:
    """What an action of ``action_type`` does to its rank's live activations: +1, -1 or 0."""
    return _ACTIVATION_CHANGE[action_type]


def simulate(schedule: Schedule, costs: Costs | None = None) -> SimResult:
    """Validate ``schedule``, then run it; raise ``DeadlockError`` if it cannot finish.

    A large schedule is checked and run in numpy's whole-array passes where they apply
    (``vectorised``: the same result); the event loop runs the rest, and says what is wrong."""
    costs = costs or Costs()
    with paused_gc():
        if schedule.large:
            from meshdbg.worker.pipelining import vectorised  # numpy: loaded for large schedules only

            result = vectorised.simulate(schedule, costs)
            if result is not None:
                return result
        validate(schedule)
        return Run(schedule, costs).loop()


# Every action one step, an overlapped F+B too: the step model of torch's compute-only orders.
STEP_COSTS = Costs(forward=1, backward_input=1, backward_weight=1, backward=1, send=1, recv=1, overlap=1)


def step_grid(schedule: Schedule) -> list[list[AnyAction | None]]:
    """Each rank's actions by step, None for a step it waits idle: every action takes one
    step and starts at the first step after all it depends on (torch's rule for the idle
    steps of its compute-only orders, ``_add_bubbles_to_actions``). A rank's row ends at
    its last action."""
    result = simulate(schedule, STEP_COSTS)
    grid: list[list[AnyAction | None]] = []
    for rank_actions, rank_starts in zip(schedule.actions, result.starts):
        row: list[AnyAction | None] = [None] * (int(rank_starts[-1]) + 1 if rank_starts else 0)
        for action, start in zip(rank_actions, rank_starts):
            row[int(start)] = action
        grid.append(row)
    return grid


class _Step(NamedTuple):
    """How an action of one type on one stage runs, precomputed so the loop looks up once.

    Event keys are ``slot * block + stage * microbatches + microbatch``; ``waits_for``
    and ``key`` hold keys for microbatch 0, so adding the action's microbatch gives its own.
    """

    waits_for: tuple[int, ...]  # the events the action needs, checked in this order
    duration: float
    key: int  # the event the action's end is recorded under


class Run:
    """One simulation over a flat end-time table indexed by event key.

    An action's dependencies are fixed offsets from its own ``stage * microbatches +
    microbatch``, turned into one ``_Step`` per (type, stage) in ``steps``.
    """

    def __init__(self, schedule: Schedule, costs: Costs, lowered: bool | None = None) -> None:
        self.schedule = schedule
        self.costs = costs
        microbatches = schedule.microbatches
        self.block = block = schedule.num_stages * microbatches
        lowered = is_lowered(schedule) if lowered is None else lowered
        last = schedule.num_stages - 1
        self.steps: dict[ActionType, list[_Step]] = {t: [] for t in ActionType}
        for stage in range(last + 1):
            recv_input = lowered and stage > 0 and crosses_ranks(schedule, stage - 1)
            recv_grad = lowered and stage < last and crosses_ranks(schedule, stage)
            forward = ((-microbatches,) if stage > 0 else ()) + ((4 * block,) if recv_input else ())
            backward = ((0, block + microbatches) if stage < last else (0,)) + ((5 * block,) if recv_grad else ())
            here = stage * microbatches
            for action_type, offsets in (
                (T.F, forward),
                (T.I, backward),
                (T.B, backward),
                (T.W, (block,)),
                (T.SEND_F, (0,)),
                (T.SEND_B, (block,)),
                (T.RECV_F, (2 * block - microbatches,)),
                (T.RECV_B, (3 * block + microbatches,)),
            ):
                waits_for = tuple(here + offset for offset in offsets)
                own = _SLOT_OF[action_type] * block + here
                self.steps[action_type].append(_Step(waits_for, costs.of(action_type), own))

    def describe(self, key: int) -> str:
        """The text form of the event behind ``key``, for deadlock messages."""
        slot, index = divmod(key, self.block)
        stage, microbatch = divmod(index, self.schedule.microbatches)
        return f"{stage}{_SLOT_NAME[slot]}{microbatch}"

    def loop(self) -> SimResult:
        """Run every rank as far as it can, waking ranks as the events they wait on end.

        This loop runs once per action (1.57 M in the benchmark), so it keeps to local
        variables and flat lists; a rank that must wait is parked under the missing key.
        """
        actions = self.schedule.actions
        ranks = len(actions)
        end, steps = [_NOT_DONE] * (len(_SLOT_NAME) * self.block), self.steps
        position = [0] * ranks
        clock = [0.0] * ranks
        # Filled in place (a rank's k-th action sets entry k); a deadlock raises before use.
        starts = [[0.0] * len(rank_actions) for rank_actions in actions]
        ends = [[0.0] * len(rank_actions) for rank_actions in actions]
        # The ranks parked under each missing event key; what is left at the end is deadlocked.
        waiting_on: dict[int, list[int]] = {}
        ready = deque(range(ranks))
        overlapped = T.OVERLAP_F_B
        while ready:
            rank = ready.popleft()
            # Read as plain actions: the rare Overlap is told by its type and handed on whole.
            rank_actions: list[Action] = actions[rank]  # type: ignore[assignment]
            now = clock[rank]
            rank_starts, rank_ends = starts[rank], ends[rank]
            count = len(rank_actions)
            for step in range(position[rank], count):
                stage, action_type, microbatch = rank_actions[step]
                if action_type is overlapped:  # rare: two halves' dependencies and two ends
                    start, missing, duration, keys = self._overlap(rank_actions[step], now, end)  # type: ignore[arg-type]
                    if missing >= 0:
                        waiting_on.setdefault(missing, []).append(rank)
                        break
                    now = start + duration
                    rank_starts[step] = start
                    rank_ends[step] = now
                    for key in keys:
                        end[key] = now
                        ready.extend(waiting_on.pop(key, ()))
                    continue
                waits_for, duration, key = steps[action_type][stage]
                start = now
                for needed in waits_for:
                    finished = end[needed + microbatch]
                    if finished > start:
                        start = finished
                    elif finished < 0:  # not done yet: park the rank until it is
                        waiting_on.setdefault(needed + microbatch, []).append(rank)
                        break
                else:
                    now = start + duration
                    rank_starts[step] = start
                    rank_ends[step] = now
                    key += microbatch
                    end[key] = now
                    if key in waiting_on:
                        ready.extend(waiting_on.pop(key))
                    continue
                break
            else:
                step = count
            position[rank], clock[rank] = step, now
        if waiting_on:
            raise DeadlockError(
                {
                    rank: (position[rank], str(actions[rank][position[rank]]), self.describe(key))
                    for key, parked in waiting_on.items()
                    for rank in parked
                }
            )
        return self._summary(clock, starts, ends)

    def _overlap(self, entry: Overlap, now: float, end: list[float]) -> tuple[float, int, float, tuple[int, ...]]:
        """(start, first missing event key or -1, duration, the halves' event keys) of ``entry``."""
        start, keys = now, []
        for half in parts(entry):
            waits_for, _, key = self.steps[half.type][half.stage]
            for needed in waits_for:
                finished = end[needed + half.microbatch]
                if finished < 0:
                    return start, needed + half.microbatch, 0.0, ()
                start = max(start, finished)
            keys.append(key + half.microbatch)
        return start, -1, self.costs.of_action(entry), tuple(keys)

    def _summary(self, clock: list[float], starts: list[list[float]], ends: list[list[float]]) -> SimResult:
        """Makespan, per-rank bubble ratios and activation peaks of the finished run.

        The peaks depend on the order alone, not on timing, so they are a running sum
        over each list, taken here in C rather than per action in the loop.
        """
        makespan = max(clock, default=0.0)
        busy = [sum(map(sub, rank_ends, rank_starts)) for rank_starts, rank_ends in zip(starts, ends)]
        bubble = bubble_ratios(makespan, busy)
        change = _ACTIVATION_CHANGE.__getitem__
        actions = self.schedule.actions
        plain = flatten(actions) if has_overlaps(actions) else actions
        peak = tuple(max(accumulate(map(change, map(type_of, rank_actions)), initial=0)) for rank_actions in plain)
        return SimResult(makespan, bubble, peak, starts, ends)
