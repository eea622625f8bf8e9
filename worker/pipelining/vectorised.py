"""The simulator's run in whole-array passes (numpy), for large schedules: the same result.

Under the simulator's rules an action ends at ``max(its rank's previous end, the ends of what
it waits for) + its duration``: over a whole schedule, the least fixed point of that
equation. It is found from below by rounds of two scans, each a running maximum over whole
arrays (``end_k = P_k + max_{j<=k}(ready_j - P_{j-1})``, P the running sum of durations):

* along each microbatch's chain of data dependencies (F of stage 0 up to the last stage, then
  the backward down again, with the SEND/RECV between ranks of a lowered schedule), the path
  on which a pipeline's waits pass from rank to rank, given the current ends of everything
  each action waits for;
* then along each rank's list, each action ready no earlier than the chain scan's end for it
  less its duration.

Every value stays a lower bound of the answer; a round starts by checking the equation on
every action at once, and ends it when it holds: interleaved 1F1B with p = 64, v = 4,
m = 1,024 (524,288 actions) needs 2 rounds and 3 checks, where the event loop switches ranks
131,071 times.

``simulate`` returns None, and the simulator runs its event loop instead, wherever the answer
could differ from that loop's or the loop says more:

* an ``Overlap`` entry (two halves, two ends);
* a dependency the schedule lacks, or no fixed point within ``ROUNDS`` rounds: a rank waits
  for ever (the loop's ``DeadlockError`` names each waiting rank and what it waits for); with
  a zero duration, a cycle of waits could settle, so a first run with every duration 1
  proves there is none;
* durations whose sums floating point cannot hold exactly (the scans add in another order
  than the loop): every duration must be a multiple of 2**-20 and their total below 2**52 of
  those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from meshdbg.worker.pipelining.columns import CODE, Columns, Rows
from meshdbg.worker.pipelining.ir import ActionType, Schedule
from meshdbg.worker.pipelining.simulator import Costs, Run, SimResult, activation_change, bubble_ratios

T = ActionType
ROUNDS = 50  # rounds before the event loop takes over (a generated schedule needs 2-4)
_UNIT = 2.0**-20  # every duration a multiple of it, and their total below 2**52 of it: exact sums
_FORWARD_PLACE = np.array([{T.RECV_F: 0, T.F: 1, T.SEND_F: 2}.get(t, -1) for t in ActionType])
_BACKWARD_PLACE = np.array([{T.RECV_B: 0, T.I: 1, T.B: 1, T.SEND_B: 2}.get(t, -1) for t in ActionType])
_CHANGE = np.array([activation_change(t) for t in ActionType])

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Steps = Mapping[ActionType, Sequence[tuple[tuple[int, ...], float, int]]]  # the simulator's Run.steps


def simulate(schedule: Schedule, costs: Costs) -> SimResult | None:
    """``simulator.simulate``'s result for ``schedule``, or None where the event loop must run
    (module docstring) or ``schedule`` is not valid (``validate`` then says why)."""
    columns = schedule.columns
    if columns is None or not columns.valid():
        return None
    run = Run(schedule, costs, lowered=columns.lowered)
    durations = np.array([costs.of(t) if t is not T.OVERLAP_F_B else 0.0 for t in ActionType])
    counts = np.bincount(columns.code, minlength=len(ActionType))
    units = durations[counts > 0] / _UNIT  # of each type there is
    if not (np.isfinite(units).all() and np.array_equal(units, np.floor(units))
            and sum(int(u) * int(n) for u, n in zip(units, counts[counts > 0])) < 2**52):
        return None
    duration = durations[columns.code]
    graph = _Graph(columns, run.steps, run.block)
    if graph.missing or (not units.all() and graph.settle(np.ones(columns.count)) is None):
        return None  # a dependency no action records, or a cycle of waits: a deadlock
    ends = graph.settle(duration)
    if ends is None:
        return None
    bounds = columns.bounds
    makespan = float(ends.max(initial=0.0))  # a rank's ends never decrease: its last is its clock
    return SimResult(makespan, bubble_ratios(makespan, _per_rank_sums(duration, bounds).tolist()),
                     tuple(_peaks(_CHANGE[columns.code], bounds)), Times(ends - duration, bounds), Times(ends, bounds))


def _per_rank_sums(values: Floats, bounds: list[int]) -> Floats:
    """The sum of each rank's slice of ``values`` (0 for a rank without actions)."""
    totals = np.concatenate([[0.0], np.cumsum(values)])
    return totals[bounds[1:]] - totals[bounds[:-1]]


def _peaks(change: Ints, bounds: list[int]) -> list[int]:
    """The most activations each rank held: the running sum of its changes, from 0."""
    running = np.concatenate([[0], np.cumsum(change)])
    peaks = []
    for start, stop in zip(bounds, bounds[1:]):
        peaks.append(int(max(0, (running[start + 1:stop + 1] - running[start]).max(initial=0))))
    return peaks


class Times(Rows[float]):
    """Per-rank lists of times, each made from the flat array when first read: a schedule's
    table needs none of them, its SVG or trace each once."""

    def __init__(self, values: Floats, bounds: list[int]) -> None:
        super().__init__(bounds)
        self._values = values

    def _make(self, start: int, stop: int) -> list[float]:
        return self._values[start:stop].tolist()


class _Graph:
    """Who waits for whom: each action's dependencies (flat indexes, ``count`` for none), and
    where it sits in its rank's row and its microbatch's chain."""

    def __init__(self, columns: Columns, steps: Steps, block: int) -> None:
        microbatch, row = columns.microbatch, columns.row
        self.count = count = columns.count
        lengths, schedule = columns.lengths, columns.schedule
        num_stages, microbatches = schedule.num_stages, schedule.microbatches
        # Per (type, stage), numbered as ``row``: the event keys it waits for (``none`` past
        # its last) and the one it records, for microbatch 0; every lookup after is one gather.
        present = np.zeros(len(ActionType) * num_stages, bool)
        present[row] = True
        none = 7 * block  # no event: the keys none .. none + m - 1 stand for `count` (ends[count] = 0)
        wait_table = np.full((3, len(present)), none, np.int64)
        own_table = np.zeros(len(present), np.int64)
        for action_type, per_stage in steps.items():
            for s, (waits_for, _, own) in enumerate(per_stage):
                wait_table[:len(waits_for), CODE[action_type] * num_stages + s] = waits_for
                own_table[CODE[action_type] * num_stages + s] = own
        index_of = np.full(none + microbatches, -1, np.intp)  # event key -> the action recording it
        index_of[none:] = count
        index_of[own_table[row] + microbatch] = np.arange(count)
        self.deps = [index_of[waits[row] + microbatch] for waits in wait_table if (waits[present] != none).any()]
        self.missing = any(bool((deps < 0).any()) for deps in self.deps)
        # Rank rows, padded to the longest; flat order is row order when all are as long.
        width = max(lengths, default=0)
        self.rank_starts = np.array(columns.bounds[:-1], np.int64)
        self.rank_at = None
        if count != len(lengths) * width:
            position = np.arange(count) - np.repeat(self.rank_starts, lengths)
            self.rank_at = np.repeat(np.arange(len(lengths)), lengths) * width + position
        self.rank_shape = (len(lengths), width)
        # Microbatch chains: RECV_F, F, SEND_F up the stages, then RECV_B, I/B, SEND_B down;
        # only the places some action takes, in that order (a narrower grid).
        stages = np.arange(num_stages)
        forward, backward = _FORWARD_PLACE[:, None], _BACKWARD_PLACE[:, None]
        place_table = np.where(forward >= 0, 3 * stages + forward,
                               np.where(backward >= 0, 3 * (2 * num_stages - 1 - stages) + backward, -1)).ravel()
        place_table[~present] = -1
        used = np.zeros(6 * num_stages + 1, bool)  # the last stands for -1, no place
        used[place_table] = True
        used[-1] = False
        compact = np.cumsum(used) - 1  # a used place's position among the used
        compact[-1] = -1
        place = compact[place_table][row]
        self.on_chain = None if (place >= 0).all() else np.nonzero(place >= 0)[0]  # None: every action
        if self.on_chain is not None:
            place, microbatch = place[self.on_chain], microbatch[self.on_chain]
        self.chain_shape = (microbatches, int(used.sum()))
        self.chain_at = microbatch * self.chain_shape[1] + place

    def settle(self, duration: Floats) -> Floats | None:
        """Every action's end under ``duration``, or None without a fixed point in ``ROUNDS``."""
        on_chain, count = self.on_chain, self.count
        rank_scan = _Scan(self.rank_shape, self.rank_at, duration)
        chain_scan = _Scan(self.chain_shape, self.chain_at, duration if on_chain is None else duration[on_chain])
        ends = np.zeros(count + 1)  # the last entry: the sentinel, 0
        ready, start = np.empty(count), np.empty(count)
        chain_ends = np.empty(count) if on_chain is None else np.full(count, -np.inf)  # off the chains: no bound
        firsts = self.rank_starts[self.rank_starts < count]  # each rank's first action has no previous
        first, *others = self.deps
        for round_ in range(ROUNDS):
            ends.take(first, out=ready)  # the latest end of what each action waits for
            for deps in others:
                np.maximum(ready, ends.take(deps, out=start), out=ready)
            start[1:] = ends[:-2]  # each action's rank's previous end (none for a rank's first)
            start[firsts] = 0.0
            np.maximum(start, ready, out=start)
            if round_ and np.array_equal(np.add(start, duration, out=start), ends[:-1]):
                return ends[:-1]  # the equation holds everywhere
            if on_chain is None:
                chain_scan.ends(ready, out=chain_ends)
            else:
                chain_ends[on_chain] = chain_scan.ends(ready[on_chain], out=np.empty(len(on_chain)))
            np.maximum(ready, np.subtract(chain_ends, duration, out=start), out=ready)
            rank_scan.ends(ready, out=ends[:-1])
        return None


class _Scan:
    """``end_k = max(end_{k-1}, ready_k) + duration_k`` along the rows of a grid; ``at`` None:
    the values fill the grid row after row, else they sit at those flat places (gaps between
    or after them)."""

    def __init__(self, shape: tuple[int, int], at: Ints | None, duration: Floats) -> None:
        self.at = at
        self.grid = np.zeros(shape)
        self.flat = self.grid.reshape(-1)
        self.gaps = at is not None and len(at) < self.flat.size  # a gap takes -inf: it passes its left neighbour's on
        if at is None:
            self.flat[:] = duration
        else:
            self.flat[at] = duration
        np.cumsum(self.grid, axis=1, out=self.grid)
        self.total = self.flat.copy() if at is None else self.flat[at]  # P_k
        self.before = self.total - duration  # P_{k-1}

    def ends(self, ready: Floats, out: Floats) -> Floats:
        """The ends given each action's ``ready``, into ``out``: ``P_k + max_{j<=k}(ready_j - P_{j-1})``."""
        if self.at is None:
            np.subtract(ready, self.before, out=self.flat)
        else:
            if self.gaps:
                self.flat.fill(-np.inf)
            self.flat[self.at] = np.subtract(ready, self.before, out=out)
        np.maximum.accumulate(self.grid, axis=1, out=self.grid)
        return np.add(self.flat if self.at is None else self.flat.take(self.at, out=out), self.total, out=out)
