"""`meshdbg interrupt RANKS`: break the selected ranks into pdb.

A running rank stops where it is, in a new session; a session running a command (`n` over a
long loop) stops at its next Python line, as Ctrl-C does in local pdb.
"""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.selection import parse_selection, ranks_text
from meshdbg.debugger.deadlines import INTERRUPT_S
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, report_no_answer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("ranks", help="selection, e.g. all, 3, 0,3-5, ranks(hosts=1)")
    add_timeout_argument(parser, INTERRUPT_S, "break in")


async def main(args: argparse.Namespace) -> int:
    parse_selection(args.ranks)
    async with await connect(args.addr) as client:
        ranks = await client.interrupt(args.ranks, args.timeout)
    if not ranks:
        print(f"meshdbg: no rank in {args.ranks} is running", file=sys.stderr)
        return 1
    print(f"interrupting {ranks_text(ranks)}")
    return report_no_answer(ranks.no_answer, args, INTERRUPT_S)
