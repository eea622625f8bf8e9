"""`meshdbg compare [--json] RANKS EXPR`: one expression on every selected stopped rank, grouped by value."""

from __future__ import annotations

import argparse

from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.deadlines import COMPARE_S
from meshdbg.debugger.value_groups import left_out, value_groups, value_text
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, print_json, report_no_answer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help='an array of {"ranks", "value", "error", "outlier", '
                        '"sessions": [{"rank", "thread", "id"}]}, largest group first, errors last')
    add_timeout_argument(parser, COMPARE_S, "evaluate it")
    parser.add_argument("ranks", help="selection: all, 0,3-5, ranks(1,4), ranks(hosts=1, gpus=0:4)")
    parser.add_argument("expression", help="a Python expression, evaluated in each rank's current pdb frame")


async def main(args: argparse.Namespace) -> int:
    parse_selection(args.ranks)  # usage errors before touching the network
    async with await connect(args.addr) as client:
        results = await client.compare(args.ranks, args.expression, args.timeout)
        missing = left_out(args.ranks, await client.workers(), results)
    groups = value_groups(results)
    if args.json:
        print_json(groups)
    else:
        print(value_text(groups, missing))
    silent = report_no_answer([r.session.rank for r in results if r.no_answer], args, COMPARE_S)
    return 1 if silent or any(g["error"] for g in groups) or not groups else 0
