"""Benchmark the scheduler: generate + lower + simulate a large interleaved pipeline.

Prints one JSON object per line; the ``variants`` lines compare each published order with
meshdbg's own variant of it (memory, makespan with and without communication cost). ``floor`` is the time to merely build a list holding as
many actions as the lowered schedule (no scheduling at all), measured in the same run,
so ``ratio`` = total / floor compares machines. Each phase is the best of ``--repeat``
runs. Run: ``python bench/bench_schedule.py [--ranks 64 --stages-per-rank 4
--microbatches 1024 --repeat 3]``.

The floor builds its actions the way the scheduler does, under the same conditions:
with ``bulk.new_action``, the cyclic GC paused (``gc_paused``: true), as ``generate``,
``lower`` and ``simulate`` pause it themselves. Floors printed before ``gc_paused``
existed used ``Action(...)`` with the GC running over the schedules still alive: they
timed mostly the collector (about 1.3 s against 0.3 s), and were no floor, as the
scheduler now builds actions faster than that."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from meshdbg.worker.pipelining.bulk import new_action, paused_gc  # noqa: E402
from meshdbg.worker.pipelining.ir import Action, ActionType  # noqa: E402
from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402
from meshdbg.worker.pipelining.simulator import Costs, simulate  # noqa: E402

R = TypeVar("R")

# Each published order beside meshdbg's own variant of it, on one placement (stages per rank).
VARIANTS = (
    ("interleaved-1f1b", "interleaved-1f1b-tight", 2),
    ("zb1p", "zb1p-greedy", 2),
    ("zbv", "zbv-greedy", 2),
    ("zbv", "dualpipev", 2),
)
COMM_COSTS = {"free": Costs(), "send=recv=0.5": Costs(send=0.5, recv=0.5)}


def best_of(repeat: int, work: Callable[[], R]) -> tuple[float, R]:
    """The shortest wall time of ``repeat`` calls, and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def floor(count: int) -> list[Action]:
    """Build ``count`` actions and nothing else: the cost any scheduler pays."""
    forward = ActionType.F
    with paused_gc():
        return [new_action((i & 255, forward, i)) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="interleaved-1f1b")
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--stages-per-rank", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    p, v, m = args.ranks, args.stages_per_rank, args.microbatches

    t_generate, schedule = best_of(args.repeat, lambda: generate(args.kind, p, v, m))
    t_lower, lowered = best_of(args.repeat, lambda: lower(schedule))
    t_simulate, result = best_of(args.repeat, lambda: simulate(lowered))
    actions = sum(len(rank) for rank in lowered.actions)
    t_floor, _ = best_of(args.repeat, lambda: floor(actions))
    total = t_generate + t_lower + t_simulate
    print(json.dumps({
        "bench": "generate+lower+simulate", "kind": args.kind, "ranks": p, "stages_per_rank": v,
        "microbatches": m, "actions": actions, "generate_s": round(t_generate, 3), "lower_s": round(t_lower, 3),
        "simulate_s": round(t_simulate, 3), "total_s": round(total, 3), "floor_s": round(t_floor, 3),
        "ratio": round(total / t_floor, 2), "gc_paused": True, "target_s": 2.0, "makespan": result.makespan,
    }))
    small = lower(generate("interleaved-1f1b", 4, 2, 8))
    small_result = simulate(small)
    print(json.dumps({
        "bench": "lowered makespan", "kind": "interleaved-1f1b", "ranks": 4, "stages_per_rank": 2,
        "microbatches": 8, "makespan": small_result.makespan, "ideal": 2 * 8 * 3,
        "bubble": [round(b, 4) for b in small_result.bubble],
    }))
    for ranks, microbatches in ((4, 8), (4, 16), (8, 16)):
        variants(ranks, microbatches)


def variants(ranks: int, microbatches: int) -> None:
    """Makespan and peak activations of each published order and its variant, lowered, with
    free communication and with send = recv = 0.5 (F = 1, B = 2, I = W = 1): one line each."""
    for published, variant, stages_per_rank in VARIANTS:
        row: dict[str, object] = {"bench": "variants", "ranks": ranks, "stages_per_rank": stages_per_rank,
                                  "microbatches": microbatches}
        for kind in (published, variant):
            lowered = lower(generate(kind, ranks, stages_per_rank, microbatches))
            row[kind] = {"peak_activations": list(simulate(lowered).peak_activations)} | {
                f"makespan_{name}": simulate(lowered, costs).makespan for name, costs in COMM_COSTS.items()
            }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
