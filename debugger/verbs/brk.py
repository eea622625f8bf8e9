"""`meshdbg break SEL ACTION... | --list [SEL] | --clear [SEL]`: stop pipeline ranks right before an action.

ACTION is the schedule's notation (meshdbg.worker.pipelining.ir.parse_action_pattern): `3B5`,
`3F*`, `*B5`, `W`. Each selected rank's agent adds it to its runtime's action breakpoints
(meshdbg.worker.pipelining.progress), which stay, as pdb's do, until `--clear`. Exit 1 when a
selected rank could not be reached.
"""

from __future__ import annotations

import argparse

from meshdbg.debugger.pipeline_view import breaks_text
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.verbs import add_server_argument, connect
from meshdbg.wire.errors import UsageError
from meshdbg.worker.pipelining.errors import ActionParseError
from meshdbg.worker.pipelining.ir import parse_action_pattern


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="show the selected ranks' action breakpoints")
    what.add_argument("--clear", action="store_true", help="forget the selected ranks' action breakpoints")
    parser.add_argument("ranks", nargs="?", default="", help="selection (with --list or --clear: default all)")
    parser.add_argument("actions", nargs="*", metavar="ACTION",
                        help="stop right before it: 3B5, 3F* (any microbatch), *B5 (any stage), W (every W)")


def check_actions(actions: list[str]) -> list[str]:
    """The action patterns, each checked; UsageError naming the first that does not parse."""
    try:
        return [str(parse_action_pattern(text)) for text in actions]
    except ActionParseError as exc:
        raise UsageError(str(exc)) from None


async def main(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)  # usage errors before touching the network
    adding = check_actions(args.actions)
    if (args.list or args.clear) and adding:
        raise UsageError("break --list and --clear take a selection, no action")
    if not (args.list or args.clear or adding):
        raise UsageError("break needs a selection and an action, e.g. meshdbg break 'ranks(pp=2)' 3B5 "
                         "(or --list, --clear)")
    async with await connect(args.addr) as client:
        views = await client.pipeline(args.ranks, add_breaks=adding, clear_breaks=args.clear)
    print(breaks_text(views, adding))
    return 1 if any(v.status.error for v in views) else 0
