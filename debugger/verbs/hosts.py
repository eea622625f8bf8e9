"""`meshdbg hosts [--json]`: the hosts of a `meshdbg run` (DESIGN §3b), and their state.

    INDEX  HOST  ADDRESS      STATE  RANKS
    0      h1    198.18.0.2   up     0-1
"""

from __future__ import annotations

import argparse

from meshdbg.debugger.verbs import add_server_argument, connect, print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true", help='a JSON array of {"index", "hostname", "address", '
                        '"state", "ranks", "placer"}')


async def main(args: argparse.Namespace) -> int:
    from meshdbg.debugger.selection import describe_ranks

    async with await connect(args.addr) as client:
        hosts = await client.hosts()
    if args.json:
        print_json([host.to_json() for host in hosts])
        return 0
    if not hosts:
        print("no hosts: this server runs no mesh (meshdbg serve)")
        return 1
    rows = [("INDEX", "HOST", "ADDRESS", "STATE", "RANKS")] + [
        (str(h.index), h.hostname, h.address, h.state, describe_ranks(h.ranks) if h.ranks else "-") for h in hosts]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0
