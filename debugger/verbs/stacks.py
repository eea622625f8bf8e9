"""`meshdbg stacks [RANKS] [--threads main|all] [--json]`: where every rank is, as a merged tree."""

from __future__ import annotations

import argparse

from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.stack_tree import stack_groups, stack_tree
from meshdbg.debugger.deadlines import STACKS_S
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, print_json, report_no_answer
from meshdbg.wire.vocabulary import StackSource, State

MAIN, ALL_THREADS = "main", "all"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("ranks", nargs="?", default="", help="selection (default: all)")
    parser.add_argument("--threads", choices=(MAIN, ALL_THREADS), default=MAIN,
                        help="the main thread only (default), or every thread of the user's")
    parser.add_argument("--json", action="store_true",
                        help='an array of groups {"ranks", "thread", "frames", "sources", "states"}')
    add_timeout_argument(parser, STACKS_S, "answer from inside (py-spy is tried after)")


async def main(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)  # usage errors before touching the network
    async with await connect(args.addr) as client:
        ranks = await client.stacks(args.ranks, all_threads=args.threads == ALL_THREADS, timeout_s=args.timeout)
    if args.json:
        print_json(stack_groups(ranks))
    else:
        print(stack_tree(ranks))
    return report_no_answer([r.rank for r in ranks if r.source is StackSource.NONE and r.state is not State.EXITED],
                            args, STACKS_S)
