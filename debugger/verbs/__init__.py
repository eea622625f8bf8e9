"""The `meshdbg` verbs, one module each: `add_arguments(parser)` and `main(args) -> int`.

meshdbg.debugger.cli imports only the module of the verb being run, so a scripted
`meshdbg list --json` loads neither the launcher nor the console nor the scheduler. What
several verbs share (the server option, JSON output) is here; keep it light.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    """`--addr`: which server a client verb talks to (DESIGN §2 says how it is found otherwise)."""
    parser.add_argument("--addr", help="server address (default: MESHDBG_ADDR, else the connection file)")


def print_json(value: object) -> None:
    """What `--json` prints: one indented JSON document on stdout."""
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")
