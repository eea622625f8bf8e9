"""`meshdbg host --join URL`: this node's agent for a multi-host `meshdbg run` (DESIGN §3b).

    MESHDBG_TOKEN=... meshdbg host --join meshdbg://198.18.0.1:40123#sha256=ab12...
    meshdbg host --join URL --token-file ~/.meshdbg/run.json --index 1

The token comes from MESHDBG_TOKEN or --token-file (a file holding it, or the run's connection
file), never from the command line, where any user of the node could read it. The agent
forks the ranks the run gives it and ends them, and exits, when the run ends or goes away.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from meshdbg.wire.connection import ConnectionInfo, parse_url
from meshdbg.wire.environment import TOKEN
from meshdbg.wire.errors import UsageError
from meshdbg.wire.logs import add_log_argument, logged


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--join", required=True, metavar="URL",
                        help="the run's join URL, meshdbg://ADDR:PORT#sha256=FP (printed by `meshdbg run --on join`)")
    parser.add_argument("--index", type=int, help="this host's index (default: SLURM_NODEID, GROUP_RANK, "
                        "JOB_COMPLETION_INDEX, else the run orders hosts by name and address)")
    parser.add_argument("--token-file", type=Path, metavar="FILE",
                        help="read the run's token from FILE (the token alone, or a connection file) "
                             "instead of MESHDBG_TOKEN")
    add_log_argument(parser)


def read_token(args: argparse.Namespace) -> str:
    """The run's token: --token-file, else MESHDBG_TOKEN; UsageError when neither has one."""
    if args.token_file is None:
        token = TOKEN.get()
        if not token:
            raise UsageError("meshdbg host needs the run's token: set MESHDBG_TOKEN or give --token-file FILE")
        return token
    try:
        text = args.token_file.read_text().strip()
    except OSError as exc:
        raise UsageError(f"cannot read the token file {args.token_file}: {exc.strerror}") from None
    if text.startswith("{"):
        try:
            text = str(json.loads(text)["token"])
        except (ValueError, KeyError):
            raise UsageError(f"the token file {args.token_file} is JSON without a token") from None
    if not text:
        raise UsageError(f"the token file {args.token_file} is empty")
    return text


@logged("host")
async def main(args: argparse.Namespace) -> int:
    from meshdbg.host.identity import index_hint
    from meshdbg.host.remote import serve

    addr, fingerprint = parse_url(args.join)
    if not args.join.startswith("meshdbg://"):
        raise UsageError(f"--join takes the run's URL, meshdbg://ADDR:PORT#sha256=FP, not {args.join!r}")
    if args.index is not None and args.index < 0:
        raise UsageError(f"--index {args.index}: a host index is 0 or more")
    return await serve(ConnectionInfo(addr, read_token(args), fingerprint), index_hint(args.index))
