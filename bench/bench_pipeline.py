"""Pipeline runtime benchmark (issues 6, 14): steps/s of meshdbg's runtime vs torch.distributed.pipelining.

    python bench/bench_pipeline.py [--quick] [--ranks 2] [--kinds gpipe,1f1b,...]

First, in this process, the split backward on one stage of the benchmark model (``--hidden``
wide, batch / microbatches rows, one intra-op thread): the median time of B, of I and of W
(``split_backward.SplitBackward``), I + W against B (target <= 1.10), beside the same split
with every W through autograd (``fuse_linear=False``: ``ratio_engine``) and the method it
replaced (I by ``autograd.grad`` to the input keeping the graph, W by ``autograd.grad`` to
the weights walking it again: ``ratio_rewalk``), timed in the same loop.

Then for each schedule kind (torch's equivalent class; meshdbg's own variants against the
torch order they vary: interleaved-1f1b-tight against ScheduleInterleaved1F1B, zb1p-greedy
against ScheduleInterleavedZeroBubble, zbv-greedy against ScheduleZBVZeroBubble),
`--ranks` processes (bench_pipeline_worker.py, spawned here, meeting through a file://
rendezvous in a temporary directory) each run both runtimes on the same toy MLP
(`StageChunk`, `--hidden` wide), the same batch split into the same `--microbatches`, with
one intra-op thread per process. Each runtime does `--warmup` steps, then `--steps` timed
SGD steps, `--rounds` times (alternating which goes first); its steps/s is the best round,
a round lasting as long as its slowest rank. On a shared machine the load changes from
round to round, so `ratio_paired_median` (the median over rounds of torch's round time over
ours in the same round) is printed beside `ratio` (best against best).

With ``--variants``, each of meshdbg's own orders (interleaved-1f1b-tight, zb1p-greedy,
zbv-greedy) also runs against our runtime on the published order it varies, alternating in
the same processes, so that the load of a shared machine hits both alike:
``ratio_paired_median`` is the median over rounds of the published order's round time
over the variant's (above 1: the variant is faster).

Idle per rank: measured is the mean `StepStats.bubble` of our runtime over the timed steps
(time outside F/B/I/W compute, so waiting in RECV counts as idle); predicted is the
simulator's on the same lowered schedule, with each action type costing its mean duration
measured in those same steps (averaged over ranks), a SEND costing its measured isend call
and a RECV the one-way gloo latency of one activation (half a median ping-pong), idle being
1 - (compute time of the rank) / makespan.

Prints one JSON object per line per (kind, runtime), then a summary object; the Markdown
table of bench_pipeline.md goes to stderr. Every process it starts is killed in a `finally`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402
from meshdbg.worker.pipelining.simulator import Costs, simulate  # noqa: E402

WORKER = Path(__file__).resolve().parent / "bench_pipeline_worker.py"
# kind -> (torch class, stages per rank)
KINDS = {
    "gpipe": ("ScheduleGPipe", 1),
    "1f1b": ("Schedule1F1B", 1),
    "interleaved-1f1b": ("ScheduleInterleaved1F1B", 2),
    "interleaved-1f1b-tight": ("ScheduleInterleaved1F1B", 2),
    "looped-bfs": ("ScheduleLoopedBFS", 2),
    "zb1p": ("ScheduleInterleavedZeroBubble", 2),
    "zb1p-greedy": ("ScheduleInterleavedZeroBubble", 2),
    "zbv": ("ScheduleZBVZeroBubble", 2),
    "zbv-greedy": ("ScheduleZBVZeroBubble", 2),
    "dualpipev": ("ScheduleDualPipeV", 2),
}
# meshdbg's own orders, each with the published order it varies (same placement).
VARIANTS = (("interleaved-1f1b-tight", "interleaved-1f1b"), ("zb1p-greedy", "zb1p"), ("zbv-greedy", "zbv"))
SPLIT_REPEAT = 400  # backward passes timed per method
TIMEOUT_S = 120  # per kind, all ranks together


def run_ranks(kind: str, args: argparse.Namespace, workdir: Path, against: str = "torch") -> list[dict]:
    """Spawn the ranks of one kind, wait for them, and return each rank's JSON report."""
    rendezvous = workdir / f"rendezvous-{kind}-{against}"
    command = [sys.executable, str(WORKER), "--kind", kind, "--against", against, "--init-method", f"file://{rendezvous}"]
    for name in ("microbatches", "batch", "hidden", "warmup", "steps", "rounds"):
        command += [f"--{name}", str(getattr(args, name))]
    processes = [subprocess.Popen(command, env=dict(os.environ, RANK=str(rank), WORLD_SIZE=str(args.ranks)),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for rank in range(args.ranks)]
    deadline = time.monotonic() + TIMEOUT_S
    try:
        outputs = [process.communicate(timeout=max(1.0, deadline - time.monotonic())) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    for rank, (process, (out, err)) in enumerate(zip(processes, outputs)):
        if process.returncode != 0:
            raise RuntimeError(f"{kind}: rank {rank} exited with {process.returncode}:\n{err[-3000:]}")
    return [json.loads(out.splitlines()[-1]) for out, _ in outputs]


def predict(kind: str, args: argparse.Namespace, reports: list[dict]) -> tuple[list[float], float, Costs]:
    """The simulator's idle fraction per rank and makespan (s), and the measured costs it used."""
    mean = {t: statistics.fmean(r["ours"]["costs_s"][t] for r in reports)
            for t in reports[0]["ours"]["costs_s"]}
    comm = [r["comm_s"] for r in reports if r["comm_s"] is not None]
    costs = Costs(forward=mean["F"], backward=mean.get("B", 0.0), backward_input=mean.get("I", 0.0),
                  backward_weight=mean.get("W", 0.0), send=mean.get("send", 0.0),
                  recv=statistics.fmean(comm) if comm else 0.0)
    schedule = lower(generate(kind, args.ranks, KINDS[kind][1], args.microbatches))
    result = simulate(schedule, costs)
    compute = [sum(costs.of_action(a) for a in actions if not a.type.is_comm) for actions in schedule.actions]
    return [1 - busy / result.makespan for busy in compute], result.makespan, costs


def measure(kind: str, args: argparse.Namespace, workdir: Path) -> dict:
    """Both runtimes on one kind: prints one JSON line per runtime, returns the summary row."""
    reports = run_ranks(kind, args, workdir)
    idle, makespan, costs = predict(kind, args, reports)
    row = {"kind": kind, "idle_measured": [round(r["ours"]["bubble"], 3) for r in reports],
           "idle_predicted": [round(i, 3) for i in idle]}
    timed = round_times(reports)
    rounds = {"ours": timed["ours"], "torch": timed["against"]}
    for name in ("ours", "torch"):
        row[f"{name}_steps_per_s"] = round(args.steps / min(rounds[name]), 2)
        line = {"bench": "pipeline", "kind": kind, "runtime": name, "ranks": args.ranks,
                "stages_per_rank": KINDS[kind][1], "microbatches": args.microbatches, "batch": args.batch,
                "hidden": args.hidden, "steps": args.steps, "steps_per_s": row[f"{name}_steps_per_s"],
                "step_ms_rounds": [round(1e3 * s / args.steps, 2) for s in rounds[name]]}
        if name == "torch":
            line["schedule"] = KINDS[kind][0]
        else:
            line |= {"idle_measured": row["idle_measured"], "idle_predicted": row["idle_predicted"],
                     "predicted_step_ms": round(1e3 * makespan, 2),
                     "costs_ms": {k: round(1e3 * v, 3) for k, v in asdict(costs).items() if v}}
        print(json.dumps(line), flush=True)
    row["ratio"] = round(row["ours_steps_per_s"] / row["torch_steps_per_s"], 2)
    row["ratio_paired_median"] = round(statistics.median(t / o for o, t in zip(rounds["ours"], rounds["torch"])), 2)
    return row


def round_times(reports: list[dict]) -> dict[str, list[float]]:
    """Each round's time per runner ("ours" and the baseline, "against"): its slowest rank's."""
    return {name: [max(times) for times in zip(*(r[name]["round_s"] for r in reports))] for name in ("ours", "against")}


def measure_variant(variant: str, published: str, args: argparse.Namespace, workdir: Path) -> dict:
    """Our runtime on ``variant`` against our runtime on ``published``, in the same processes."""
    rounds = round_times(run_ranks(variant, args, workdir, against=published))
    line = {"bench": "pipeline variant", "kind": variant, "against": published, "ranks": args.ranks,
            "microbatches": args.microbatches, "steps": args.steps,
            "steps_per_s": round(args.steps / min(rounds["ours"]), 2),
            "against_steps_per_s": round(args.steps / min(rounds["against"]), 2),
            "ratio_paired_median": round(statistics.median(a / o for o, a in zip(rounds["ours"], rounds["against"])), 3)}
    print(json.dumps(line), flush=True)
    return line


def split_backward(args: argparse.Namespace) -> dict:
    """I + W against B on one stage of the benchmark model, now and by the replaced method."""
    import torch  # here, so that the scheduler imports above stay light

    from meshdbg.worker.pipelining.split_backward import SplitBackward, run_backward
    from meshdbg.worker.pipelining.toymodel import StageChunk

    torch.set_num_threads(1)
    rows = args.batch // args.microbatches
    stage = StageChunk(1, args.hidden, seed=0)  # the workers build their stages from seed 0 too
    params = list(stage.parameters())
    splits = {"": SplitBackward(stage), "_engine": SplitBackward(stage, fuse_linear=False)}
    inputs, grad = torch.randn(rows, args.hidden), torch.randn(rows, args.hidden)
    spent: dict[str, list[float]] = {name: [] for name in ("B", "I", "W", "I_engine", "W_engine", "I_rewalk", "W_rewalk")}

    def forward() -> tuple[torch.Tensor, torch.Tensor]:
        x = inputs.clone().requires_grad_()
        return x, stage(x)

    for _ in range(SPLIT_REPEAT):
        x, y = forward()
        began = time.perf_counter()
        run_backward((y,), (grad,), (), keep_graph=False, accumulate=True)  # as the runtime's B
        spent["B"].append(time.perf_counter() - began)
        for kind, halves in splits.items():
            x, y = forward()
            began = time.perf_counter()
            _, weights = halves.backward_input(y, grad, x)
            middle = time.perf_counter()
            weights.run()
            spent[f"I{kind}"].append(middle - began)
            spent[f"W{kind}"].append(time.perf_counter() - middle)
        x, y = forward()
        began = time.perf_counter()
        torch.autograd.grad(y, [x], grad, retain_graph=True)
        middle = time.perf_counter()
        for param, g in zip(params, torch.autograd.grad(y, params, grad)):
            param.grad = g if param.grad is None else param.grad + g
        spent["I_rewalk"].append(middle - began)
        spent["W_rewalk"].append(time.perf_counter() - middle)
    median = {name: statistics.median(times) for name, times in spent.items()}
    pair = {kind: statistics.median(i + w for i, w in zip(spent[f"I{kind}"], spent[f"W{kind}"]))
            for kind in ("", "_engine", "_rewalk")}
    line = {"bench": "split backward", "hidden": args.hidden, "rows": rows, "repeat": SPLIT_REPEAT,
            **{f"{name}_ms": round(1e3 * value, 4) for name, value in median.items()},
            "ratio": round(pair[""] / median["B"], 3), "ratio_engine": round(pair["_engine"] / median["B"], 3),
            "ratio_rewalk": round(pair["_rewalk"] / median["B"], 3),
            "target_ratio": 1.1}
    print(json.dumps(line), flush=True)
    return line


def markdown(rows: list[dict]) -> str:
    """The table of bench_pipeline.md: one line per kind."""
    lines = ["| kind | torch class | ours steps/s | torch steps/s | ours/torch (best) | ours/torch (paired median) "
             "| idle per rank, measured | idle per rank, predicted |", "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['kind']} | {KINDS[row['kind']][0]} | {row['ours_steps_per_s']} | {row['torch_steps_per_s']} "
                     f"| {row['ratio']} | {row['ratio_paired_median']} | {' / '.join(map(str, row['idle_measured']))} "
                     f"| {' / '.join(map(str, row['idle_predicted']))} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds (a smoke run)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ", ".join(KINDS))
    parser.add_argument("--variants", action="store_true",
                        help="also run each of meshdbg's variants against the published order it varies")
    for name, default in (("ranks", 2), ("microbatches", 8), ("batch", 128), ("hidden", 512), ("warmup", 3),
                          ("steps", 10), ("rounds", 4)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    if args.quick:
        args.warmup, args.steps, args.rounds = 2, 5, 2
    kinds = args.kinds.split(",")
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; known: {', '.join(KINDS)}")
    started = time.perf_counter()
    split = split_backward(args)
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as workdir:
        rows = [measure(kind, args, Path(workdir)) for kind in kinds]
        variants = [measure_variant(variant, published, args, Path(workdir))
                    for variant, published in VARIANTS] if args.variants else []
    print(json.dumps({"bench": "pipeline summary", "ranks": args.ranks, "rows": rows, "split_backward": split,
                      "variants": variants,
                      "min_ratio": min(row["ratio"] for row in rows), "target_ratio": 1.0,
                      "elapsed_s": round(time.perf_counter() - started, 1)}), flush=True)
    print(markdown(rows), file=sys.stderr)


if __name__ == "__main__":
    main()
