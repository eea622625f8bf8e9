"""`meshdbg interrupt RANKS`: break the selected ranks into pdb, and say which could not yet, and why.

A running rank stops where it is, in a new session; a session running a command (`n` over a
long loop) stops at its next Python line, as Ctrl-C does in local pdb. A rank blocked outside
Python (C code, a sleep, a collective) stops only when that returns: it is named as not
stopped yet (meshdbg.debugger.interruption).
"""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.deadlines import INTERRUPT_S
from meshdbg.debugger.interruption import interrupt
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.verbs import add_server_argument, add_timeout_argument, connect, print_json, report_no_answer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help='{"asked", "now_stopped", "not_stopped": [int], '
                        '"not_asked": {reason: [int]}}')
    parser.add_argument("ranks", help="selection, e.g. all, 3, 0,3-5, ranks(hosts=1)")
    add_timeout_argument(parser, INTERRUPT_S, "break in")


async def main(args: argparse.Namespace) -> int:
    parse_selection(args.ranks)
    async with await connect(args.addr) as client:
        report = await interrupt(client, args.ranks, timeout_s=args.timeout)
    if args.json:
        print_json(report.to_json())
    elif not report.asked:
        why = f"could be interrupted ({report.text()})" if report.not_asked else "is running"
        print(f"meshdbg: no rank in {args.ranks} {why}", file=sys.stderr)
    else:
        print(report.text())
    silent = report_no_answer(report.no_answer, args, INTERRUPT_S)
    return 0 if report.asked and not silent else 1
