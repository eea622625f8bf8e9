"""`meshdbg pipeline [SEL] [--json] [--trace F] [--svg F]`: who waits for whom in a pipeline job.

Every selected rank's agent says where its runtime stands in its lowered schedule (it answers
while the rank computes, waits in C or is stopped in pdb); the table shows each rank's step,
actions done/left, the action it runs or waits in (a RECV with the peer's SEND it waits
for), then the cause of a stall in one line (meshdbg.worker.pipelining.waits). Exit 1 when a
rank waits for a peer.

`--trace F` and `--svg F` put the last step every rank completed beside its plan (the
simulator, with costs fitted from the step's measured actions; meshdbg.worker.pipelining.actual)
on one time axis, and the text names the bubbles measured and planned and where time was lost.
"""

from __future__ import annotations

import argparse
import json
import sys

from meshdbg.debugger.pipeline_view import (PipelineRankView, comparison_of, comparison_svg, comparison_trace,
                                            pipeline_json, pipeline_table)
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.verbs import add_server_argument, connect, print_json
from meshdbg.wire.errors import UsageError
from meshdbg.worker.pipelining.actual import describe
from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.waits import find_stall


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("ranks", nargs="?", default="", help="selection (default: all)")
    parser.add_argument("--json", action="store_true", help='{"ranks": [...], "stall": {"cause", "held"}}')
    parser.add_argument("--trace", metavar="FILE", help="write the last step every rank ran, and its plan, as a "
                        "Perfetto (Chrome trace event) JSON")
    parser.add_argument("--svg", metavar="FILE", help="write the same as a Gantt chart: the plan and the run on one "
                        "time axis, the bubbles, the actions that lost most")


async def main(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)  # usage errors before touching the network
    timings = bool(args.trace or args.svg)
    async with await connect(args.addr) as client:
        views = await client.pipeline(args.ranks, timings=timings)
    if args.json:
        print_json(pipeline_json(views))
    else:
        print(pipeline_table(views))
    if timings:
        return _write_comparison(args, views)
    return 1 if find_stall([v.status for v in views]).cause else 0


def _write_comparison(args: argparse.Namespace, views: list[PipelineRankView]) -> int:
    """Write --trace and --svg, and (without --json) say what they show; 1 when they cannot be made."""
    try:
        comparison = comparison_of(views)
    except ScheduleError as exc:
        print(f"meshdbg pipeline: no planned against actual: {exc}", file=sys.stderr)
        return 1
    outputs = ((args.trace, lambda: json.dumps(comparison_trace(comparison))), (args.svg, lambda: comparison_svg(comparison)))
    for path, render in outputs:
        if path:
            try:
                with open(path, "w", encoding="utf-8") as out:
                    out.write(render())
            except OSError as exc:
                raise UsageError(f"cannot write {path}: {exc}") from None
    if not args.json:
        print("\n".join(describe(comparison)))
    return 0
