"""`meshdbg pipeline [SEL] [--json] [--trace F] [--svg F]`: who waits for whom in a pipeline job.

Every selected rank's agent says where its runtime stands in its lowered schedule (it answers
while the rank computes, waits in C or is stopped in pdb); the table shows each rank's step,
actions done/left, the action it runs or waits in (a RECV with the peer's SEND it waits
for), then the cause of a stall in one line (meshdbg.worker.pipelining.waits). Exit 1 when a
rank waits for a peer.
"""

from __future__ import annotations

import argparse

from meshdbg.debugger.pipeline_view import pipeline_json, pipeline_table
from meshdbg.debugger.selection import parse_selection
from meshdbg.debugger.verbs import add_server_argument, connect, print_json
from meshdbg.worker.pipelining.waits import find_stall


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("ranks", nargs="?", default="", help="selection (default: all)")
    parser.add_argument("--json", action="store_true", help='{"ranks": [...], "stall": {"cause", "held"}}')


async def main(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)  # usage errors before touching the network
    async with await connect(args.addr) as client:
        views = await client.pipeline(args.ranks)
    if args.json:
        print_json(pipeline_json(views))
    else:
        print(pipeline_table(views))
    return 1 if find_stall([v.status for v in views]).cause else 0
