"""`meshdbg servers [--json]`: the live servers this user can reach, from their connection files."""

from __future__ import annotations

import argparse
import time

from meshdbg.debugger.verbs import print_json
from meshdbg.wire.connection import runtime_dir, live_servers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help='a JSON array of {"addr", "pid", "what", "started", "file"}')


def age(seconds: float) -> str:
    """`5 s`, `3 min`, `2 h`: how long a server has run."""
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit}"
    return f"{seconds:.0f} s"


def main(args: argparse.Namespace) -> int:
    servers = live_servers()
    if args.json:
        print_json([{"addr": s.info.addr, "pid": s.pid, "what": s.what, "started": s.started, "file": str(s.path)}
                    for s in servers])
        return 0
    if not servers:
        print(f"no live meshdbg server (connection files live in {runtime_dir()})")
        return 1
    now = time.time()
    rows = [("ADDR", "PID", "UP", "WHAT")] + [(s.info.addr, str(s.pid), age(now - s.started), s.what) for s in servers]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[3])
    if len(servers) > 1:
        print("pick one with --addr ADDR (or MESHDBG_ADDR=ADDR)")
    return 0
