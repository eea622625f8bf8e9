"""`meshdbg attach [RANK] [--plain]`: the console, or line-based pdb on one rank for scripts."""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.selection import AttachTarget, parse_attach_target
from meshdbg.debugger.verbs import add_server_argument, connect
from meshdbg.wire.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("rank", nargs="?", help="rank, or #session-id (--plain only)")
    parser.add_argument("--plain", action="store_true",
                        help="line-based pdb on one rank, no console (the default when not on a terminal)")


async def main(args: argparse.Namespace) -> int:
    """The console on a terminal (at meshdbg>, or in RANK); line-based pdb otherwise or with --plain."""
    if not args.plain and sys.stdin.isatty() and sys.stdout.isatty():
        from meshdbg.debugger.console import run_console

        target = parse_attach_target(args.rank) if args.rank is not None else AttachTarget()
        if target.session_id is not None:
            raise UsageError("the console attaches by rank (meshdbg attach 2); use --plain for a session id")
        async with await connect(args.addr) as client:
            return await run_console(client, attach_rank=target.rank)
    from meshdbg.debugger.line_attach import attach_lines

    if args.rank is None:
        raise UsageError("attach needs a rank (e.g. `meshdbg attach 2`)")
    target = parse_attach_target(args.rank)
    async with await connect(args.addr) as client:
        return await attach_lines(client, rank=target.rank, session_id=target.session_id)
