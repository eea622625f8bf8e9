"""Pipeline-parallel training of a toy MLP on the mesh, executed from meshdbg's schedules.

    meshdbg run --mesh pp=4 examples/pipeline_train.py --schedule interleaved-1f1b \
        --stages-per-rank 2 --microbatches 8 --steps 20

Each rank runs its lowered action list (meshdbg.worker.pipelining.runtime) over gloo; the rank of
the last stage prints the loss; every rank prints its step time and measured bubble.
`--break-at ACTION` (`2F3`, `3B*`, `W`) stops in pdb right before that action, every step, as
`meshdbg break SEL ACTION` does while the job runs (the same action breakpoints). `--load F`
runs a schedule from a CSV as written, even one whose order deadlocks (to debug it with
`meshdbg pipeline`); `--slow STAGE,MB,SECONDS` sleeps in that forward (step 0), a slow rank.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

from meshdbg.worker.pipelining.cli import load_schedule
from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.ir import Schedule
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.progress import TRACKER
from meshdbg.worker.pipelining.runtime import PipelineRuntime
from meshdbg.worker.pipelining.validation import is_lowered, validate
from meshdbg.worker.pipelining.schedules import SCHEDULES, generate
from meshdbg.worker.pipelining.toymodel import StageChunk, loss_fn, make_batch, stage_gradients


def stage_microbatch(text: str) -> tuple[int, int]:
    stage, _, microbatch = text.partition(",")
    return int(stage), int(microbatch)


def slow_at(text: str) -> tuple[tuple[int, int], float]:
    where, _, seconds = text.rpartition(",")
    return stage_microbatch(where), float(seconds)


def load(path: str, world: int) -> Schedule:
    """The schedule of a CSV, checked (but not simulated: it may deadlock) for `world` ranks."""
    schedule = load_schedule(path)
    if schedule.ranks != world:
        raise ScheduleError(f"{path} has {schedule.ranks} ranks; the mesh has {world}")
    validate(schedule)
    return schedule


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedule", default="1f1b", choices=list(SCHEDULES))
    parser.add_argument("--stages-per-rank", type=int, default=1)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--break-at", action="append", default=[], metavar="ACTION")
    parser.add_argument("--load", metavar="CSV", help="run this schedule (torch's, Monarch's or meshdbg's CSV)")
    parser.add_argument("--raise-at", type=stage_microbatch, action="append", default=[], metavar="STAGE,MB")
    parser.add_argument("--slow", type=slow_at, action="append", default=[], metavar="STAGE,MB,SECONDS")
    parser.add_argument("--dump-grads", metavar="DIR", help="after step 1, write each rank's loss and gradients here")
    parser.add_argument("--init-method", default="env://", help="torch.distributed rendezvous (default env://)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    try:  # a schedule the mesh cannot run is a usage error, before any rank waits for the others
        schedule = load(args.load, world) if args.load else generate(args.schedule, world, args.stages_per_rank,
                                                                      args.microbatches)
        schedule = schedule if is_lowered(schedule) else lower(schedule)
        TRACKER.change_breaks(args.break_at)
        args.microbatches = schedule.microbatches
        if args.batch % args.microbatches:
            raise ScheduleError(f"--batch {args.batch} must split into --microbatches {args.microbatches} equal parts")
    except ScheduleError as exc:
        print(f"pipeline_train: error: {exc}", file=sys.stderr)
        return 2
    dist.init_process_group("gloo", init_method=args.init_method, rank=rank, world_size=world,
                            timeout=timedelta(seconds=120))
    try:
        modules = {s: StageChunk(s, args.hidden, args.seed) for s, r in enumerate(schedule.stage_to_rank) if r == rank}
        for module in modules.values():
            module.raise_at.update(args.raise_at)
            module.sleep_at.update(args.slow)
        runtime = PipelineRuntime(schedule, rank, modules, loss_fn,
                                  activation_shape=(args.batch // args.microbatches, args.hidden))
        optimizer = torch.optim.SGD(runtime.parameters(), lr=args.lr)
        inputs, targets = make_batch(args.batch, args.hidden, args.seed)
        for step in range(args.steps):
            optimizer.zero_grad(set_to_none=True)
            stats = runtime.step(inputs, targets)
            if args.dump_grads and step == 0:
                grads = stage_gradients(modules)
                with open(os.path.join(args.dump_grads, f"rank{rank}.json"), "w") as handle:
                    json.dump({"loss": stats.loss, "grads": grads}, handle)
            optimizer.step()
            loss = f" loss {stats.loss:.6f}" if stats.loss is not None else ""
            print(f"step {step}{loss} time {stats.step_s * 1e3:.1f} ms bubble {stats.bubble:.2f}", flush=True)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
