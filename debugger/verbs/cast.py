"""`meshdbg cast [--json] RANKS COMMAND`: one pdb command on a set of ranks, outputs grouped."""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.format import failed, grouped_cast_output, not_answering_text
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.deadlines import CAST_S
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, print_json, report_no_answer
from meshdbg.wire.vocabulary import State


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help="an array of {rank, name, output, ok}")
    parser.add_argument("ranks", help="selection: all, 0,3-5, ranks(1,4), ranks(hosts=1, gpus=0:4)")
    parser.add_argument("command", help="the pdb command, e.g. 'p loss'")
    add_timeout_argument(parser, CAST_S, "answer")


async def main(args: argparse.Namespace) -> int:
    parse_selection(args.ranks)  # usage errors before touching the network
    async with await connect(args.addr) as client:
        results = await client.cast(args.ranks, args.command, args.timeout)
    if args.json:
        print_json([r.to_json() for r in results])
    else:
        print(grouped_cast_output(results))
    # Past the deadline, or not answering (SIGSTOPped, cut off): said apart, the second at once.
    late = report_no_answer([r.session.rank for r in results if r.no_answer], args, CAST_S)
    silent = [(r.session.rank, r.error) for r in results if not r.no_answer and r.session.state is State.NOT_ANSWERING]
    if silent:
        print(f"meshdbg: {not_answering_text(silent)}", file=sys.stderr)
    return 1 if late or silent or any(failed(r) for r in results) else 0
