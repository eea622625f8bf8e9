"""`meshdbg dap [--port P]`: a Debug Adapter Protocol server for IDEs over the whole mesh
(DESIGN §3c). Its first line of output is `meshdbg dap: listening on 127.0.0.1:P`, then the
launch.json configuration that reaches it (with the server's token)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Awaitable

from meshdbg.debugger.verbs import add_server_argument, bounded_argument, connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_server_argument(parser)
    from meshdbg.wire.coords import PORT_LIMIT

    parser.add_argument("--port", type=bounded_argument(PORT_LIMIT), default=0, help="port to listen on, on 127.0.0.1 (default 0: a free one, printed)")


async def main(args: argparse.Namespace) -> int:
    from meshdbg.debugger.dap.server import DapServer, listen_for_ides

    listener = listen_for_ides(args.port)
    try:
        client = await connect(args.addr)
    except BaseException:
        listener.close()
        raise
    dap = DapServer(client, listener)
    try:
        await dap.start()
        dap.announce(sys.stdout)
        if await until_stopped(dap.follow()):
            print("meshdbg dap: the server stopped; so does the adapter", file=sys.stderr, flush=True)
        return 0
    finally:
        await dap.close()
        await client.close()


async def until_stopped(work: Awaitable[None]) -> bool:
    """Run `work` until it ends (True; its error propagates) or SIGINT/SIGTERM (False)."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        print("meshdbg dap: stopped; the ranks stay as they are", file=sys.stderr, flush=True)
        return False
    return True
