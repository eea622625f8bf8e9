"""`meshdbg continue [--clear] [RANKS]`: resume the selected (default: all) stopped ranks.

Their breakpoints (`b`) stay, as after `c` in local pdb; `--clear` forgets them first.
"""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.format import not_resumed_text, resumed_text
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.deadlines import CONTINUE_S
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, report_no_answer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--clear", action="store_true", help="forget every breakpoint of those ranks first")
    parser.add_argument("ranks", nargs="?", help="selection (default: all)")
    add_timeout_argument(parser, CONTINUE_S, "leave pdb")


async def main(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)
    async with await connect(args.addr) as client:
        resumed = await client.resume(args.ranks or "", clear_breakpoints=args.clear, timeout_s=args.timeout)
    status = report_no_answer(resumed.no_answer, args, CONTINUE_S)
    if resumed.not_resumed:
        print(f"meshdbg: {not_resumed_text(resumed.not_resumed)}", file=sys.stderr)
        status = 1
    if not resumed:
        print(f"meshdbg: {resumed_text(resumed)}", file=sys.stderr)
        return 1
    print(resumed_text(resumed))
    return status
