"""`meshdbg attach [RANK] [--plain]`: the console, or line-based pdb on one rank for scripts."""

from __future__ import annotations

import argparse
import sys

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.selection import AttachTarget, parse_attach_target
from meshdbg.debugger.verbs import add_server_argument
from meshdbg.wire.connection import ServerChoice
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
        async with await connect_asking(args.addr) as client:
            return await run_console(client, attach_rank=target.rank)
    from meshdbg.debugger.line_attach import attach_lines

    if args.rank is None:
        raise UsageError("attach needs a rank (e.g. `meshdbg attach 2`)")
    target = parse_attach_target(args.rank)
    async with await ControlClient.connect(args.addr) as client:
        return await attach_lines(client, rank=target.rank, session_id=target.session_id)


async def connect_asking(addr: str | None) -> ControlClient:
    """Connect; with several live servers and none named, ask the person at the terminal which."""
    try:
        return await ControlClient.connect(addr)
    except ServerChoice as choice:
        servers = choice.servers
    for number, server in enumerate(servers, 1):
        print(f"  {number}) {server.info.addr}  {server.what} (pid {server.pid})")
    while True:
        try:
            answer = input(f"which server? [1-{len(servers)}] ").strip()
        except EOFError:
            raise UsageError("no server chosen") from None
        if answer.isdecimal() and 1 <= int(answer) <= len(servers):
            return await ControlClient.connect(servers[int(answer) - 1].info.addr)
        print(f"type a number from 1 to {len(servers)} (or Ctrl-D)")
