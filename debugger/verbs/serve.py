"""`meshdbg serve`: a DebugClient alone, for workers started by another launcher.

Its first line of output (stdout) is its address. Then, on stderr, one line per rank that stops
in pdb, crashes or exits (meshdbg.debugger.news), so a torchrun or SLURM job that goes quiet
says why; `--quiet` leaves those out.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import signal
import sys
import threading
from typing import TYPE_CHECKING

from meshdbg.debugger.views import change_of
from meshdbg.debugger.news import News, may_be_news

from meshdbg.debugger.verbs import add_tls_arguments, bounded_argument, server_certificate
from meshdbg.wire.coords import PORT_LIMIT
from meshdbg.wire.logs import add_log_argument, logged, logger, said

if TYPE_CHECKING:
    from meshdbg.debugger.service import DebugClient
    from meshdbg.debugger.sessions import Session
    from meshdbg.wire.vocabulary import WatchKind

log = logger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: loopback only)")
    parser.add_argument("--port", type=bounded_argument(PORT_LIMIT), default=0, help="port to bind (default 0: a free one, printed)")
    parser.add_argument("--quiet", action="store_true", help="do not announce stops, crashes and exits")
    add_tls_arguments(parser)
    add_log_argument(parser)


@logged("serve")
async def main(args: argparse.Namespace) -> int:
    from meshdbg.debugger.gc_pauses import keep_gc_pauses_short
    from meshdbg.debugger.service import DebugClient

    server = DebugClient(host=args.host, port=args.port, tls=server_certificate(args, args.host))
    connection = await server.start()
    print(connection.addr, flush=True)
    if connection.fingerprint:
        said(log, f"meshdbg: TLS; workers elsewhere need MESHDBG_TLS_FINGERPRINT={connection.fingerprint}")
    said(log, f"meshdbg: serving on {connection.addr}; clients find it through its connection file "
              f"{server.connection_file} or MESHDBG_ADDR + MESHDBG_TOKEN. Ctrl-C stops.")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    announcer = None if args.quiet else asyncio.create_task(announce(server))
    collector = asyncio.create_task(keep_gc_pauses_short(server.idle))
    try:
        await stop.wait()
    finally:
        collector.cancel()
        if announcer is not None:
            announcer.cancel()
        await server.stop()
    return 0


async def announce(server: DebugClient) -> None:
    """Print the news of the server's own registry on stderr, through a thread, so a stderr
    nobody reads never blocks the server."""
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    threading.Thread(target=_write_lines, args=(lines,), daemon=True, name="meshdbg-announce").start()
    news = News()
    async for event in server.registry.watch(exits=True, interest=_may_be_news):
        item = news.feed(*change_of(event))
        if item is not None:
            lines.put(f"meshdbg: {item.text()}")


def _may_be_news(kind: WatchKind, session: Session) -> bool:
    return may_be_news(kind, session.state, session.stops, session.end_reason)


def _write_lines(lines: "queue.SimpleQueue[str]") -> None:
    while True:
        line = lines.get()
        try:
            print(line, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            return
