"""The `meshdbg` verbs, one module each: `add_arguments(parser)` and `main(args) -> int`.

meshdbg.debugger.cli imports only the module of the verb being run, so a scripted
`meshdbg list --json` loads neither the launcher nor the console nor the scheduler. What
several verbs share (the server option, JSON output) is here; keep it light.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from meshdbg.debugger.certificates import ServerCertificate
    from meshdbg.debugger.control import ControlClient


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    """`--addr`: which server a client verb talks to (DESIGN §2 says how it is found otherwise)."""
    parser.add_argument("--addr", help="server address (default: MESHDBG_ADDR, else the connection file)")


async def connect(addr: str | None) -> "ControlClient":
    """The server a client verb talks to. With several live servers and none named, a person
    at a terminal picks one (the menu on stderr, so stdout stays the verb's own); a script
    gets exit 2 naming them (meshdbg.wire.connection.ServerChoice)."""
    from meshdbg.debugger.control import ControlClient
    from meshdbg.wire.connection import ServerChoice
    from meshdbg.wire.errors import UsageError

    try:
        return await ControlClient.connect(addr)
    except ServerChoice as choice:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise
        servers = dict(enumerate(choice.servers, 1))
    for number, server in servers.items():
        print(f"  {number}) {server.info.addr}  {server.what} (pid {server.pid})", file=sys.stderr)
    by_answer = {str(number): server for number, server in servers.items()}
    while True:
        sys.stderr.write(f"which server? [1-{len(servers)}] ")
        sys.stderr.flush()
        answer = sys.stdin.readline()
        if not answer:
            raise UsageError("no server chosen")
        if answer.strip() in by_answer:
            return await ControlClient.connect(by_answer[answer.strip()].info.addr)
        print(f"type a number from 1 to {len(servers)} (or Ctrl-D)", file=sys.stderr)


def bounded_argument(limit: float, fractions: bool = False) -> Callable[[str], int | float]:
    """An argparse `type=` for a number from 0 to below `limit` (whole unless `fractions`), through
    the one helper every number meshdbg reads goes through (meshdbg.wire.coords)."""
    from meshdbg.wire.coords import bounded_float, bounded_int

    def number(text: str) -> int | float:
        value = bounded_float(text, limit) if fractions else bounded_int(text, int(limit))
        if value is None:
            raise argparse.ArgumentTypeError(f"expected a {'number' if fractions else 'whole number'} from 0 to "
                                             f"below {limit:.0f}, not {text[:40]!r}")
        return value

    return number


def add_timeout_argument(parser: argparse.ArgumentParser, default_s: float, what: str) -> None:
    """`--timeout S`: how long a verb that waits on ranks waits for each (meshdbg.debugger.deadlines)."""
    from meshdbg.wire.coords import SECONDS_LIMIT

    parser.add_argument("--timeout", type=bounded_argument(SECONDS_LIMIT, fractions=True), default=0, metavar="S",
                        help=f"seconds each rank may take to {what} (default {default_s:g}); the ranks that did "
                             "not answer by then are named")


def report_no_answer(ranks: list[int], args: argparse.Namespace, default_s: float) -> int:
    """Name, in one line on stderr, the ranks that did not answer in time; the exit status (1 if any)."""
    if not ranks:
        return 0
    from meshdbg.debugger.selection import ranks_text
    from meshdbg.debugger.deadlines import deadline

    seconds = deadline(args.timeout, default_s)
    print(f"meshdbg: no answer from {ranks_text(ranks)} within {seconds:g} s (--timeout S waits longer)",
          file=sys.stderr)
    return 1


def print_json(value: object) -> None:
    """What `--json` prints: one indented JSON document on stdout, in one write (json.dump
    writes each token: 740,000 system calls for a listing of 10,000 when PYTHONUNBUFFERED is set,
    as in many containers)."""
    sys.stdout.write(json.dumps(value, indent=2) + "\n")


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """`--tls`, `--tls-cert`, `--tls-key`: how a server (`serve`, `run`) encrypts its connections."""
    group = parser.add_argument_group("TLS")
    group.add_argument("--tls", action="store_true",
                       help="serve over TLS with a self-signed certificate made now; clients pin its fingerprint "
                            "from the connection file (elsewhere: MESHDBG_TLS_FINGERPRINT, printed at start)")
    group.add_argument("--tls-cert", metavar="PEM", help="serve over TLS with this certificate (with --tls-key)")
    group.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")


def server_certificate(args: argparse.Namespace, host: str) -> "ServerCertificate | None":
    """The certificate `args` ask for (None: plain TCP); UsageError for half a pair."""
    if bool(args.tls_cert) != bool(args.tls_key):
        from meshdbg.wire.errors import UsageError

        raise UsageError("--tls-cert and --tls-key go together")
    if not (args.tls or args.tls_cert):
        return None
    from meshdbg.debugger.certificates import ServerCertificate

    if args.tls_cert:
        return ServerCertificate.load(args.tls_cert, args.tls_key)
    return ServerCertificate.self_signed(host)
