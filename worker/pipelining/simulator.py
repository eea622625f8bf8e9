"""Run per-rank action lists against a cost model: timing, bubbles, memory, deadlocks.

Each rank executes its list in order; an action starts when its rank is free and every
action it depends on has finished:

* ``F`` of stage s after ``F`` of stage s-1 (same microbatch);
* ``I``/``B`` of stage s after its own ``F`` and after ``I``/``B`` of stage s+1;
* ``W`` after its ``I``;
* in a lowered schedule, a compute action whose neighbour stage is on another rank also
  waits for its ``RECV``; a ``SEND`` waits for the compute it sends, a ``RECV`` for its
  ``SEND``. Sends never block (buffered), so only the order of the lists can deadlock.

Activations: ``F`` of (stage, microbatch) takes one unit on its rank, and the ``B`` or
``W`` of the same pair gives it back; ``peak_activations`` is the most a rank held.
A rank's bubble ratio is its idle time over the makespan.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, fields

from worker.pipelining.errors import ConstraintError, DeadlockError
from worker.pipelining.ir import Action, ActionType, Schedule
from worker.pipelining.validation import crosses_ranks, is_lowered, validate

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

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if not value >= 0:
                raise ConstraintError(f"cost {field.name}={value!r} must be a number >= 0")

    def of(self, action_type: ActionType) -> float:
        """The duration of one action of ``action_type``."""
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
    starts: list[list[float]]
    ends: list[list[float]]


# Finished-event slots: each (slot, stage, microbatch) has one end time. W has no slot:
# nothing waits for it.
_SLOT_NAME = ("F", "I/B", "SEND_F", "SEND_B", "RECV_F", "RECV_B")
_SLOT_OF = {T.F: 0, T.I: 1, T.B: 1, T.SEND_F: 2, T.SEND_B: 3, T.RECV_F: 4, T.RECV_B: 5}
_ACTIVATION_CHANGE = {action_type: 0 for action_type in ActionType} | {T.F: 1, T.W: -1, T.B: -1}
_NOT_DONE = -1.0


def simulate(schedule: Schedule, costs: Costs | None = None) -> SimResult:
    """Validate ``schedule``, then run it; raise ``DeadlockError`` if it cannot finish."""
    validate(schedule)
    return _Run(schedule, costs or Costs()).result()


class _Run:
    """One simulation over a flat end-time table indexed by event key.

    The key of (slot, stage, microbatch) is ``slot * block + stage * microbatches +
    microbatch``. An action's dependencies are fixed offsets from its own
    ``stage * microbatches + microbatch``, precomputed per (type, stage) in ``offsets``.
    """

    def __init__(self, schedule: Schedule, costs: Costs) -> None:
        self.schedule = schedule
        self.cost = {action_type: costs.of(action_type) for action_type in ActionType}
        microbatches = schedule.microbatches
        self.block = block = schedule.num_stages * microbatches
        self.own = {t: (_SLOT_OF[t] * block if t in _SLOT_OF else -1) for t in ActionType}
        lowered = is_lowered(schedule)
        last = schedule.num_stages - 1
        self.offsets: dict[ActionType, list[tuple[int, ...]]] = {t: [] for t in ActionType}
        for stage in range(last + 1):
            recv_input = lowered and stage > 0 and crosses_ranks(schedule, stage - 1)
            recv_grad = lowered and stage < last and crosses_ranks(schedule, stage)
            forward = (-microbatches,) if stage > 0 else ()
            backward = (0, block + microbatches) if stage < last else (0,)
            for action_type, offsets in (
                (T.F, forward + ((4 * block,) if recv_input else ())),
                (T.I, backward + ((5 * block,) if recv_grad else ())),
                (T.W, (block,)),
                (T.SEND_F, (0,)),
                (T.SEND_B, (block,)),
                (T.RECV_F, (2 * block - microbatches,)),
                (T.RECV_B, (3 * block + microbatches,)),
            ):
                self.offsets[action_type].append(offsets)
        self.offsets[T.B] = self.offsets[T.I]

    def describe(self, key: int) -> str:
        """The text form of the event behind ``key``, for deadlock messages."""
        slot, index = divmod(key, self.block)
        stage, microbatch = divmod(index, self.schedule.microbatches)
        return f"{stage}{_SLOT_NAME[slot]}{microbatch}"

    def result(self) -> SimResult:
        """Run every rank as far as it can, waking ranks as the events they wait on end."""
        actions = self.schedule.actions
        ranks = len(actions)
        end, cost, offsets, own = [_NOT_DONE] * (len(_SLOT_NAME) * self.block), self.cost, self.offsets, self.own
        change = _ACTIVATION_CHANGE
        microbatches = self.schedule.microbatches
        position = [0] * ranks
        clock = [0.0] * ranks
        held = [0] * ranks
        peak = [0] * ranks
        starts: list[list[float]] = [[] for _ in range(ranks)]
        ends: list[list[float]] = [[] for _ in range(ranks)]
        waiting_on: dict[int, list[int]] = {}
        blocked_at: dict[int, int] = {}
        ready = deque(range(ranks))
        while ready:
            rank = ready.popleft()
            rank_actions, step, now = actions[rank], position[rank], clock[rank]
            holding, most = held[rank], peak[rank]
            add_start, add_end = starts[rank].append, ends[rank].append
            while step < len(rank_actions):
                stage, action_type, microbatch = rank_actions[step]
                here = stage * microbatches + microbatch
                start = now
                missing = -1
                for offset in offsets[action_type][stage]:
                    finished = end[here + offset]
                    if finished < 0:
                        missing = here + offset
                        break
                    if finished > start:
                        start = finished
                if missing >= 0:
                    waiting_on.setdefault(missing, []).append(rank)
                    blocked_at[rank] = missing
                    break
                now = start + cost[action_type]
                add_start(start)
                add_end(now)
                step += 1
                holding += change[action_type]
                if holding > most:
                    most = holding
                key = own[action_type]
                if key >= 0:
                    end[key + here] = now
                    if waiting_on:
                        for waiter in waiting_on.pop(key + here, ()):
                            del blocked_at[waiter]
                            ready.append(waiter)
            position[rank], clock[rank], held[rank], peak[rank] = step, now, holding, most
        if blocked_at:
            raise DeadlockError(
                {
                    rank: (position[rank], str(actions[rank][position[rank]]), self.describe(key))
                    for rank, key in blocked_at.items()
                }
            )
        return self._summary(clock, peak, starts, ends)

    def _summary(
        self, clock: list[float], peak: list[int], starts: list[list[float]], ends: list[list[float]]
    ) -> SimResult:
        """Makespan and per-rank bubble ratios from the finished timeline."""
        makespan = max(clock, default=0.0)
        busy = [sum(e - s for s, e in zip(rank_starts, rank_ends)) for rank_starts, rank_ends in zip(starts, ends)]
        bubble = tuple((makespan - b) / makespan if makespan > 0 else 0.0 for b in busy)
        return SimResult(makespan, bubble, tuple(peak), starts, ends)
