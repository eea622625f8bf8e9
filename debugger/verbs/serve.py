"""`meshdbg serve`: a DebugClient alone, for workers started by another launcher."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default 0: a free one, printed)")


async def main(args: argparse.Namespace) -> int:
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
