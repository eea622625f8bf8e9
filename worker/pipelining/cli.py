"""``meshdbg schedule``: generate or load a pipeline schedule, check it, print and dump it.

``--kind K --ranks P --microbatches M [--stages-per-rank V]`` generates one;
``--load FILE`` reads one from a CSV written by torch, Monarch or meshdbg (``render``)
instead. Either is then optionally lowered or merged, simulated, and printed or written.

The lead's ``meshdbg`` CLI calls ``add_arguments`` on its ``schedule`` sub-parser and
``run`` on the parsed namespace; ``main`` (and ``python -m meshdbg.worker.pipelining``) does
both on its own parser. Exit status: 0 done, 1 an output file could not be written,
2 a usage, constraint or validation error, an unreadable --load file, or a schedule too
large for memory (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from meshdbg.worker.pipelining.errors import ConstraintError, ScheduleError
from meshdbg.worker.pipelining.ir import AnyAction, Schedule
from meshdbg.worker.pipelining.loaded import as_schedule
from meshdbg.worker.pipelining.lowering import lower, merge_backward
from meshdbg.worker.pipelining.picture import to_svg, to_trace
from meshdbg.worker.pipelining.render import action_texts, dump_csv, load_csv, schedule_table
from meshdbg.worker.pipelining.validation import is_lowered
from meshdbg.worker.pipelining.schedules import SCHEDULES, generate
from meshdbg.worker.pipelining.simulator import Costs, SimResult, simulate, step_grid

_COST_NAMES = {
    "F": "forward",
    "I": "backward_input",
    "W": "backward_weight",
    "B": "backward",
    "send": "send",
    "recv": "recv",
    "overlap": "overlap",
}


def parse_costs(text: str) -> Costs:
    """``"F=1,B=2.5,send=0.1"`` -> ``Costs``; names are F, I, W, B, send, recv and overlap
    (an overlapped F+B step; by default as long as its F and B together)."""
    values: dict[str, float] = {}
    for item in filter(None, text.split(",")):
        name, _, number = item.partition("=")
        if name not in _COST_NAMES:
            raise ConstraintError(f"unknown cost {name!r} in {text!r}; known: {', '.join(_COST_NAMES)}")
        try:
            value = float(number)
        except ValueError:
            raise ConstraintError(f"cost {item!r} in {text!r} is not NAME=NUMBER") from None
        if not math.isfinite(value):
            raise ConstraintError(f"cost {item!r} in {text!r} must be a finite number")
        values[_COST_NAMES[name]] = value
    return Costs(**values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``schedule`` options to ``parser``."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--kind", choices=list(SCHEDULES), help="schedule kind to generate")
    source.add_argument("--load", metavar="FILE", help="read the schedule from a CSV (torch, Monarch or meshdbg)")
    parser.add_argument("--ranks", type=int, help="pipeline ranks (p); needed with --kind")
    parser.add_argument("--stages-per-rank", type=int, default=1, help="stages per rank (v), default 1")
    parser.add_argument("--microbatches", type=int, help="microbatches (m); needed with --kind")
    parser.add_argument("--lowered", action="store_true", help="insert SEND/RECV between ranks")
    parser.add_argument("--merge-backward", action="store_true", help="merge each I directly followed by its W into B")
    parser.add_argument("--costs", default="", metavar="F=1,I=1,W=1,B=2,send=0,recv=0",
                        help="action costs; overlap=N is an overlapped F+B's duration (default: its F and B together)")
    parser.add_argument("--csv", metavar="FILE", help="write the schedule as CSV in torch's layout: a row per rank, "
                        "an empty cell per idle step (compute_only); with --lowered, every action (compute_comms)")
    parser.add_argument("--svg", metavar="FILE", help="write an SVG Gantt chart")
    parser.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto trace JSON")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")


def source(args: argparse.Namespace) -> Schedule:
    """The generated or loaded schedule ``args`` name; ``ScheduleError`` if they cannot."""
    if args.load is None:
        missing = [f"--{name}" for name in ("ranks", "microbatches") if getattr(args, name) is None]
        if missing:
            raise ConstraintError(f"--kind {args.kind} needs {' and '.join(missing)}")
        check_fits(args.ranks * args.stages_per_rank * args.microbatches * ACTIONS_PER_MICROBATCH_STAGE)
        return generate(args.kind, args.ranks, args.stages_per_rank, args.microbatches)
    return load_schedule(args.load)


ACTIONS_PER_MICROBATCH_STAGE = 3  # F, B and W at most (I and W split B; SEND and RECV come with --lowered)
BYTES_PER_ACTION = 160  # measured: gpipe, p = 1,000, m = 10,000 (2e7 actions) peaks at 3.0 GB, printed


def check_fits(actions: int) -> None:
    """Refuse at once a schedule this machine has not the memory for. (p = m = 100,000 took
    26 s and 10 GB before numpy's MemoryError said so.)"""
    need = actions * BYTES_PER_ACTION
    free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if need > free:
        raise ConstraintError(f"a schedule of up to {actions:,} actions needs about {need / 2**30:,.1f} GiB; "
                              f"this machine has {free / 2**30:,.1f} GiB free")


def load_schedule(path: str) -> Schedule:
    """The schedule a CSV (torch's, Monarch's or meshdbg's) holds, its placement read off it;
    ``ScheduleError`` when it cannot be read or placed."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConstraintError(f"cannot read --load {path}: {exc}") from None
    return as_schedule(load_csv(text), kind=f"loaded {path}")


def build(args: argparse.Namespace) -> tuple[Schedule, SimResult]:
    """Generate or load, optionally merge and lower, then simulate, as ``args`` ask."""
    schedule = source(args)
    if args.lowered and not is_lowered(schedule):
        schedule = lower(schedule, merge=args.merge_backward)
    elif args.merge_backward:
        schedule = merge_backward(schedule)
    return schedule, simulate(schedule, parse_costs(args.costs))


def summary(schedule: Schedule, result: SimResult) -> dict[str, object]:
    """The ``--json`` object."""
    return {
        "kind": schedule.kind,
        "ranks": schedule.ranks,
        "stages_per_rank": schedule.stages_per_rank,
        "microbatches": schedule.microbatches,
        "makespan": result.makespan,
        "bubble": list(result.bubble),
        "peak_activations": list(result.peak_activations),
        "actions": action_texts(schedule),
    }


def csv_rows(schedule: Schedule) -> list[list[AnyAction | None]]:
    """What ``--csv`` writes: a compute-only schedule by step with its idle steps, as torch's
    ``compute_only`` CSV; a lowered one action after action, as ``compute_comms`` (whose
    reader, torch's ``_load_csv``, refuses an empty cell)."""
    return [list(rank_actions) for rank_actions in schedule.actions] if is_lowered(schedule) else step_grid(schedule)


def _write_outputs(args: argparse.Namespace, schedule: Schedule, result: SimResult) -> None:
    """Write the files named by --csv, --svg and --trace."""
    outputs = (
        (args.csv, lambda: dump_csv(csv_rows(schedule))),
        (args.svg, lambda: to_svg(schedule, result)),
        (args.trace, lambda: json.dumps(to_trace(schedule, result))),
    )
    for path, render in outputs:
        if path:
            with open(path, "w", encoding="utf-8") as out:
                out.write(render())


def run(args: argparse.Namespace) -> int:
    """Do what ``args`` ask; return the exit status (see the module docstring)."""
    try:
        schedule, result = build(args)
    except ScheduleError as exc:
        print(f"meshdbg schedule: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:  # numpy refuses at once what would not fit
        print("meshdbg schedule: error: not enough memory for a schedule this large", file=sys.stderr)
        return 2
    try:
        _write_outputs(args, schedule, result)
    except OSError as exc:
        print(f"meshdbg schedule: cannot write output: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(summary(schedule, result)))
        return 0
    print(schedule_table(schedule))
    print(f"makespan: {result.makespan:g}")
    print("bubble: " + ", ".join(f"rank {r} {b:.3f}" for r, b in enumerate(result.bubble)))
    print("peak activations: " + ", ".join(f"rank {r} {n}" for r, n in enumerate(result.peak_activations)))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) with ``add_arguments`` and ``run`` it."""
    parser = argparse.ArgumentParser(prog="meshdbg schedule", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return exc.code if isinstance(exc.code, int) else 2
    return run(args)
