"""`meshdbg attach [RANK [THREAD]] [--plain]`: the console, or line-based pdb on one rank for scripts."""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.selection import AttachTarget, parse_attach_target, thread_session
from meshdbg.debugger.verbs import add_server_argument, connect
from meshdbg.wire.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("rank", nargs="?", help="rank, or #session-id (--plain only)")
    parser.add_argument("thread", nargs="?", help="one of the rank's threads, by name or id (`meshdbg list` shows "
                                                  "them), when it has stopped in several")
    parser.add_argument("--plain", action="store_true",
                        help="line-based pdb on one rank, no console (the default when not on a terminal)")


async def main(args: argparse.Namespace) -> int:
    """The console on a terminal (at meshdbg>, or in RANK); line-based pdb otherwise or with --plain."""
    text = " ".join(word for word in (args.rank, args.thread) if word is not None)
    target = parse_attach_target(text) if text else AttachTarget()
    if not args.plain and sys.stdin.isatty() and sys.stdout.isatty():
        from meshdbg.debugger.console import run_console

        if target.session_id is not None:
            raise UsageError("the console attaches by rank (meshdbg attach 2); use --plain for a session id")
        async with await connect(args.addr) as client:
            return await run_console(client, attach_rank=target.rank, attach_thread=target.thread)
    from meshdbg.debugger.line_attach import attach_lines

    if args.rank is None:
        raise UsageError("attach needs a rank (e.g. `meshdbg attach 2`)")
    async with await connect(args.addr) as client:
        session_id = thread_session(await client.list(), target).id if target.thread else target.session_id
        return await attach_lines(client, rank=target.rank, session_id=session_id)
