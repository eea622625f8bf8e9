"""The `meshdbg` command: one function per verb, all over the control API.

Exit status (DESIGN §2): 0 success, 1 a command failed on some rank or nothing matched,
2 usage error, 3 no server reachable. Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import os

# Our errors say what went wrong in one line; gRPC's own C-core log lines (read once, when
# grpc is first imported) would repeat it as noise. GRPC_VERBOSITY=ERROR brings them back.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import argparse
import asyncio
import json
import signal
import sys
from typing import Awaitable, Callable

from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import MeshdbgError, UsageError
from meshdbg.debugger.format import failed, grouped_cast_output, resumed_text, session_table, worker_table
from meshdbg.debugger.selection import AttachTarget, parse_attach_target, parse_selection
from meshdbg.worker.pipelining.cli import add_arguments as add_schedule_arguments
from meshdbg.worker.pipelining.cli import run as run_schedule


def _print_json(value: object) -> None:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


async def cmd_serve(args: argparse.Namespace) -> int:
    from meshdbg.debugger.service import DebugClient

    server = DebugClient(host=args.host, port=args.port)
    connection = await server.start()
    print(connection.addr, flush=True)
    print(f"meshdbg: serving on {connection.addr}; clients find it through the connection file or "
          f"MESHDBG_ADDR + MESHDBG_TOKEN. Ctrl-C stops.", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


async def cmd_list(args: argparse.Namespace) -> int:
    async with await ControlClient.connect(args.addr) as client:
        views = await client.workers() if args.all else await client.list()
    if args.json:
        _print_json([view.to_json() for view in views])
    else:
        print(worker_table(views) if args.all else session_table(views))
    return 0


async def cmd_cast(args: argparse.Namespace) -> int:
    parse_selection(args.ranks)  # usage errors before touching the network
    async with await ControlClient.connect(args.addr) as client:
        results = await client.cast(args.ranks, args.command)
    if args.json:
        _print_json([r.to_json() for r in results])
    else:
        print(grouped_cast_output(results))
    return 1 if any(failed(r) for r in results) else 0


async def cmd_continue(args: argparse.Namespace) -> int:
    if args.ranks:
        parse_selection(args.ranks)
    async with await ControlClient.connect(args.addr) as client:
        resumed = await client.resume(args.ranks or "")
    if not resumed:
        print(f"meshdbg: {resumed_text(resumed)}", file=sys.stderr)
        return 1
    print(resumed_text(resumed))
    return 0


async def cmd_attach(args: argparse.Namespace) -> int:
    """The console on a terminal (at meshdbg>, or in RANK); line-based pdb otherwise or with --plain."""
    if not args.plain and sys.stdin.isatty() and sys.stdout.isatty():
        from meshdbg.debugger.console import run_console

        target = parse_attach_target(args.rank) if args.rank is not None else AttachTarget()
        if target.session_id is not None:
            raise UsageError("the console attaches by rank (meshdbg attach 2); use --plain for a session id")
        async with await ControlClient.connect(args.addr) as client:
            return await run_console(client, attach_rank=target.rank)
    from meshdbg.debugger.line_attach import attach_lines

    if args.rank is None:
        raise UsageError("attach needs a rank (e.g. `meshdbg attach 2`)")
    target = parse_attach_target(args.rank)
    async with await ControlClient.connect(args.addr) as client:
        return await attach_lines(client, rank=target.rank, session_id=target.session_id)


async def cmd_schedule(args: argparse.Namespace) -> int:
    return run_schedule(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshdbg", description="A distributed debugger for Python process meshes.")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)

    def verb(name: str, handler: Callable[[argparse.Namespace], Awaitable[int]], help_text: str,
             client: bool = True) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(handler=handler)
        if client:
            sub.add_argument("--addr", help="server address (default: MESHDBG_ADDR, else the connection file)")
        return sub

    serve = verb("serve", cmd_serve, "run a DebugClient for workers started by another launcher", client=False)
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    serve.add_argument("--port", type=int, default=0, help="port to bind (default 0: a free one, printed)")

    from meshdbg.debugger.run import add_arguments, cmd_run

    add_arguments(verb("run", cmd_run, "start a DebugClient and a mesh of workers running SCRIPT (or -m MODULE)",
                       client=False))

    listing = verb("list", cmd_list, "the sessions and their state")
    listing.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    listing.add_argument("--all", action="store_true",
                         help="every worker (running, stopped or exited, with its exit status), not only sessions")

    cast = verb("cast", cmd_cast, "run a pdb command on a set of ranks")
    cast.add_argument("--json", action="store_true", help="an array of {rank, name, output}")
    cast.add_argument("ranks", help="selection: all, 0,3-5, ranks(1,4), ranks(hosts=1, gpus=0:4)")
    cast.add_argument("command", help="the pdb command, e.g. 'p loss'")

    resume = verb("continue", cmd_continue, "resume the selected (default: all) stopped ranks")
    resume.add_argument("ranks", nargs="?", help="selection (default: all)")

    schedule = verbs.add_parser("schedule", help="generate, print or dump a pipeline schedule",
                                description="Generate a pipeline schedule, check it in the simulator, print or dump it.")
    add_schedule_arguments(schedule)
    schedule.set_defaults(handler=cmd_schedule)

    attach = verb("attach", cmd_attach, "open the interactive console (optionally in one rank's pdb)")
    attach.add_argument("rank", nargs="?", help="rank, or #session-id (--plain only)")
    attach.add_argument("--plain", action="store_true",
                        help="line-based pdb on one rank, no console (the default when not on a terminal)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(args.handler(args))
    except MeshdbgError as exc:
        print(f"meshdbg: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("meshdbg: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `meshdbg list | head`: the reader left, nothing to report
        sys.stdout = None
        return 0
