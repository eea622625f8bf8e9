"""`meshdbg watch [--json]`: stops, crashes and exits as they happen, one line (or JSON object) each.

For scripts and other terminals: `meshdbg watch --json | jq` sees every rank that stops in pdb
(the ones stopped already first), every post-mortem crash and every worker exit, until the
server goes away (exit 3) or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json

from meshdbg.debugger.news import News
from meshdbg.debugger.verbs import add_server_argument, connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    parser.add_argument("--json", action="store_true",
                        help='one JSON object a line: {"event": "stopped"|"crashed"|"exited", "rank", ...}')


async def main(args: argparse.Namespace) -> int:
    news = News()
    async with await connect(args.addr) as client:
        async for kind, view, reason in client.watch(exits=True):
            item = news.feed(kind, view, reason)
            if item is not None:
                print(json.dumps(item.to_json()) if args.json else item.text(), flush=True)
        raise client.went_away()
