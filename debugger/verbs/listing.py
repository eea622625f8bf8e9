"""`meshdbg list [--all] [--json]`: the sessions (or every worker) and their state."""

from __future__ import annotations

import argparse

from meshdbg.debugger.verbs import add_server_argument, connect, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    parser.add_argument("--all", action="store_true",
                        help="every worker (running, stopped or exited, with its exit status), not only sessions")


async def main(args: argparse.Namespace) -> int:
    async with await connect(args.addr) as client:
        workers = await client.workers() if args.all else []
        sessions = [] if args.all else await client.list()
    if args.json:
        print_json([view.to_json() for view in [*workers, *sessions]])
    else:
        from meshdbg.debugger.format import session_table, worker_table

        print(worker_table(workers) if args.all else session_table(sessions))
    return 0
