"""Planned against actual: one step as the ranks ran it, beside the simulator's plan for it.

Every rank's runtime records when each action of its lowered list starts and ends
(meshdbg.worker.pipelining.progress). For one step that every rank completed, those times
are put on one axis (seconds from the earliest rank's start of the step, by wall clock), and
the simulator runs the same lowered schedule with costs fitted from them: the median
duration of each compute type, the median SEND, and the shortest RECV (a RECV's time is
mostly waiting; its shortest is what it costs when the data is already there).

Time lost is measured per action as how much later than planned it ends, minus how much
later the action before it on the same rank ended: a compute action that ran long, or a RECV
that waited longer than planned for its peer, loses time; one that merely starts late does not.
Bubbles are the fraction of the step a rank spent outside compute (F, B, I, W, overlaps),
for both runs alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median
from typing import Callable, NamedTuple, Sequence

from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.ir import ActionType, Schedule
from meshdbg.worker.pipelining.simulator import Costs, SimResult, simulate

T = ActionType
_COMPUTE = frozenset({T.F, T.B, T.I, T.W, T.OVERLAP_F_B})


class RankStep(NamedTuple):
    """One rank's recorded step: its wall-clock start, and each action's start and end after it (s)."""

    started: float
    starts: Sequence[float]
    ends: Sequence[float]


class Loss(NamedTuple):
    """Time action `index` (`action`) of `rank`'s list lost against the plan (see the module docstring)."""

    rank: int
    index: int  # type: ignore[assignment]  # hides tuple.index: the field's name is the JSON key
    action: str
    seconds: float


@dataclass(frozen=True)
class Comparison:
    """The step `step` of `schedule`, planned (`planned`, costs `costs`) and as run (`actual`)."""

    schedule: Schedule
    step: int
    costs: Costs
    planned: SimResult
    actual: SimResult
    losses: list[Loss]  # every action's lost time, largest first

    def bubble(self, result: SimResult) -> list[float]:
        """Each rank's share of the step outside compute, in `result` (planned or actual)."""
        shares = []
        for actions, starts, ends in zip(self.schedule.actions, result.starts, result.ends):
            busy = sum(e - s for a, s, e in zip(actions, starts, ends) if a.type in _COMPUTE)
            shares.append(1 - busy / result.makespan if result.makespan > 0 else 0.0)
        return shares

    def lost_by_rank(self) -> list[float]:
        totals = [0.0] * self.schedule.ranks
        for loss in self.losses:
            totals[loss.rank] += max(loss.seconds, 0.0)
        return totals


def fit_costs(schedule: Schedule, actual: SimResult) -> Costs:
    """Costs from measured durations (see the module docstring); a type never run costs 0."""
    by_type: dict[ActionType, list[float]] = {}
    for actions, starts, ends in zip(schedule.actions, actual.starts, actual.ends):
        for action, start, end in zip(actions, starts, ends):
            by_type.setdefault(action.type, []).append(max(end - start, 0.0))

    def typical(*types: ActionType, pick: Callable[[list[float]], float] = median) -> float:
        values = [v for t in types for v in by_type.get(t, ())]
        return pick(values) if values else 0.0

    overlap = typical(T.OVERLAP_F_B) if T.OVERLAP_F_B in by_type else None
    return Costs(forward=typical(T.F), backward_input=typical(T.I), backward_weight=typical(T.W),
                 backward=typical(T.B), send=typical(T.SEND_F, T.SEND_B), recv=typical(T.RECV_F, T.RECV_B, pick=min),
                 overlap=overlap)


def as_run(schedule: Schedule, steps: dict[int, RankStep]) -> SimResult:
    """The recorded step of every rank on one axis, as a SimResult (bubbles: see Comparison)."""
    missing = [rank for rank in range(schedule.ranks) if rank not in steps]
    if missing:
        raise ScheduleError(f"no recorded step for rank{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(map(str, missing))}")
    origin = min(step.started for step in steps.values())
    starts, ends = [], []
    for rank, actions in enumerate(schedule.actions):
        step = steps[rank]
        if len(step.starts) != len(actions):
            raise ScheduleError(f"rank {rank} recorded {len(step.starts)} actions; its list has {len(actions)}")
        offset = step.started - origin
        starts.append([offset + t for t in step.starts])
        ends.append([offset + t for t in step.ends])
    makespan = max((max(rank_ends, default=0.0) for rank_ends in ends), default=0.0)
    return SimResult(makespan, (), (), starts, ends)


def compare(schedule: Schedule, step: int, steps: dict[int, RankStep]) -> Comparison:
    """Step `step` as recorded on every rank (`steps` by rank) against the plan for it."""
    actual = as_run(schedule, steps)
    costs = fit_costs(schedule, actual)
    planned = simulate(schedule, costs)
    losses = []
    for rank, actions in enumerate(schedule.actions):
        late = 0.0
        for index, (action, planned_end, actual_end) in enumerate(zip(actions, planned.ends[rank], actual.ends[rank])):
            now_late = actual_end - planned_end
            losses.append(Loss(rank, index, str(action), now_late - late))
            late = now_late
    losses.sort(key=lambda loss: -loss.seconds)
    return Comparison(schedule, step, costs, planned, actual, losses)


def describe(comparison: Comparison, top: int = 5) -> list[str]:
    """The lines `meshdbg pipeline --trace/--svg` prints: makespans, bubbles, who lost time."""
    planned, actual = comparison.planned, comparison.actual
    lines = [f"step {comparison.step}: {actual.makespan * 1e3:.1f} ms as run, {planned.makespan * 1e3:.1f} ms planned "
             f"(costs fitted: {_costs_text(comparison.costs)})"]
    lines.append("bubble as run / planned: " + ", ".join(
        f"rank {rank} {a:.2f}/{p:.2f}"
        for rank, (a, p) in enumerate(zip(comparison.bubble(actual), comparison.bubble(planned)))))
    lost = comparison.lost_by_rank()
    lines.append("time lost by rank: " + ", ".join(f"rank {rank} {s * 1e3:.1f} ms" for rank, s in enumerate(lost)))
    worst = [loss for loss in comparison.losses[:top] if loss.seconds > 0]
    if worst:
        lines.append("most lost: " + ", ".join(f"{l.action} on rank {l.rank} {l.seconds * 1e3:.1f} ms" for l in worst))
    return lines


def _costs_text(costs: Costs) -> str:
    names = (("F", costs.forward), ("B", costs.backward), ("I", costs.backward_input), ("W", costs.backward_weight),
             ("send", costs.send), ("recv", costs.recv))
    return ", ".join(f"{name} {value * 1e3:.2f} ms" for name, value in names if value > 0)
