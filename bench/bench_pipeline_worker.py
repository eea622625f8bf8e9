"""One rank of the pipeline benchmark: both runtimes, same process, same model and data.

    RANK=r WORLD_SIZE=p python bench/bench_pipeline_worker.py --kind 1f1b --init-method file://... ...

Run by bench_pipeline.py, never by hand. The rank joins a gloo group, builds its stages of
the toy MLP (`StageChunk`, identical on every rank from the seed) twice, once for meshdbg's
`PipelineRuntime` and once for `torch.distributed.pipelining` with the equivalent schedule,
(or, with `--against KIND`, our runtime on that kind's schedule in its place),
and times `--steps` optimizer steps of each after `--warmup` steps, `--rounds` times,
alternating which runtime goes first so slow periods of a shared machine hit both. Our
runtime also reports its measured bubble per step and the mean duration of each compute
action type, measured inside the timed steps, which the driver feeds to the simulator.
Finally it measures the one-way latency of one activation over gloo with a ping-pong.
Prints one JSON object on its last line of output.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Callable

import torch
import torch.distributed as dist
import torch.distributed.pipelining as pipelining
from torch.distributed.pipelining.schedules import PipelineScheduleSingle

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.runtime import PipelineRuntime  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402
from meshdbg.worker.pipelining.toymodel import StageChunk, loss_fn, make_batch  # noqa: E402

from bench_pipeline import KINDS  # noqa: E402

Step = Callable[[torch.Tensor, torch.Tensor], float | None]


class TimedRuntime(PipelineRuntime):
    """`PipelineRuntime` that also times each compute type (F, B, I, W) and posting a send.

    The simulator wants the costs of this very run; posting an isend is not compute (the
    runtime counts it as idle) but it occupies the rank, as the simulator's `send` does.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spent: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])  # what -> [seconds, count]

    def _timed(self, what: str, began: float) -> None:
        total = self.spent[what]
        total[0] += time.perf_counter() - began
        total[1] += 1

    def _compute(self, stage, kind, *args) -> None:
        began = time.perf_counter()
        super()._compute(stage, kind, *args)
        self._timed(kind.value, began)

    def _send(self, *args) -> dist.Work:
        began = time.perf_counter()
        work = super()._send(*args)
        self._timed("send", began)
        return work

    def mean_costs(self) -> dict[str, float]:
        """Seconds per action of each compute type ("F", "B", "I", "W") and per "send" so far."""
        return {what: seconds / count for what, (seconds, count) in self.spent.items()}


def stage_modules(stage_to_rank: tuple[int, ...], rank: int, args: argparse.Namespace) -> dict[int, StageChunk]:
    """This rank's stages, freshly built from the seed (each runtime gets its own copy)."""
    return {s: StageChunk(s, args.hidden, args.seed) for s, r in enumerate(stage_to_rank) if r == rank}


def build_ours(rank: int, world: int, args: argparse.Namespace, kind: str) -> tuple[TimedRuntime, Step]:
    """Our runtime on the lowered schedule of ``kind``; a step returns the rank's measured bubble."""
    schedule = lower(generate(kind, world, KINDS[kind][1], args.microbatches))
    runtime = TimedRuntime(schedule, rank, stage_modules(schedule.stage_to_rank, rank, args), loss_fn,
                           activation_shape=(args.batch // args.microbatches, args.hidden))
    return runtime, lambda inputs, targets: runtime.step(inputs, targets).bubble


def build_torch(rank: int, world: int, args: argparse.Namespace) -> tuple[list[torch.nn.Parameter], Step]:
    """torch's equivalent schedule on the same placement; outputs not merged.

    Shapes are inferred on the first (warm-up) step: torch 2.13's static mode (`input_args`
    and `output_args` given) hands the first stage a None output gradient in 1F1B.
    """
    placement = generate(args.kind, world, args.stages_per_rank, args.microbatches).stage_to_rank
    modules = stage_modules(placement, rank, args)
    stages = [pipelining.PipelineStage(module, s, len(placement), torch.device("cpu"))
              for s, module in sorted(modules.items())]
    schedule_class = getattr(pipelining, KINDS[args.kind][0])
    single = issubclass(schedule_class, PipelineScheduleSingle)
    schedule = schedule_class(stages[0] if single else stages, args.microbatches, loss_fn=loss_fn)
    first, last = 0 in modules, len(placement) - 1 in modules

    def step(inputs: torch.Tensor, targets: torch.Tensor) -> None:
        schedule.step(*((inputs,) if first else ()), target=targets if last else None, return_outputs=False)

    return [p for module in modules.values() for p in module.parameters()], step


def timed_steps(parameters: list[torch.nn.Parameter], step: Step, args: argparse.Namespace,
                count: int) -> tuple[float, list[float | None]]:
    """Wall time of `count` SGD steps started together on every rank, and each step's result."""
    optimizer = torch.optim.SGD(parameters, lr=args.lr)
    inputs, targets = make_batch(args.batch, args.hidden, args.seed)
    results = []
    dist.barrier()
    started = time.perf_counter()
    for _ in range(count):
        optimizer.zero_grad(set_to_none=True)
        results.append(step(inputs, targets))
        optimizer.step()
    return time.perf_counter() - started, results


def one_way_latency(rank: int, world: int, args: argparse.Namespace, repeat: int = 50) -> float | None:
    """Half the median round trip of one activation between ranks 2k and 2k+1 (None if unpaired).

    The median, because on a shared machine a few trips wait for a core far longer than the rest.
    """
    peer = rank ^ 1
    if peer >= world:
        return None
    buffer = torch.zeros(args.batch // args.microbatches, args.hidden)
    trips = []
    for _ in range(repeat):
        started = time.perf_counter()
        if rank % 2 == 0:
            dist.send(buffer, peer)
            dist.recv(buffer, peer)
        else:
            dist.recv(buffer, peer)
            dist.send(buffer, peer)
        trips.append(time.perf_counter() - started)
    return statistics.median(trips) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", required=True, choices=sorted(KINDS))
    parser.add_argument("--against", default="torch", choices=["torch", *sorted(KINDS)],
                        help="the baseline: torch's equivalent schedule, or our runtime on another kind")
    parser.add_argument("--init-method", required=True)
    for name in ("microbatches", "batch", "hidden", "warmup", "steps", "rounds"):
        parser.add_argument(f"--{name}", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()
    args.stages_per_rank = KINDS[args.kind][1]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(1)  # one process per core: no oversubscription, same for both runtimes
    dist.init_process_group("gloo", init_method=args.init_method, rank=rank, world_size=world,
                            timeout=timedelta(seconds=60))
    try:
        ours, ours_step = build_ours(rank, world, args, args.kind)
        if args.against == "torch":
            against = build_torch(rank, world, args)
        else:
            baseline, baseline_step = build_ours(rank, world, args, args.against)
            against = baseline.parameters(), baseline_step
        runners = {"ours": (ours.parameters(), ours_step), "against": against}
        for parameters, step in runners.values():
            timed_steps(parameters, step, args, args.warmup)
        ours.spent.clear()
        report: dict = {"rank": rank, "ours": {"round_s": [], "bubble": []}, "against": {"round_s": []}}
        for round_index in range(args.rounds):
            order = ("ours", "against") if round_index % 2 == 0 else ("against", "ours")
            for name in order:
                elapsed, results = timed_steps(*runners[name], args, args.steps)
                report[name]["round_s"].append(elapsed)
                if name == "ours":
                    report[name]["bubble"].extend(results)
        report["ours"]["bubble"] = statistics.fmean(report["ours"]["bubble"])
        report["ours"]["costs_s"] = ours.mean_costs()
        report["comm_s"] = one_way_latency(rank, world, args)
        print(json.dumps(report), flush=True)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
