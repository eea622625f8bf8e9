"""Waiting for a rank to stop in pdb: after `c` (the console and `attach --plain` follow the
rank they let run to its next stop), and on `attach` to a session that has not stopped yet (an
interrupt of a rank blocked in C, still pending; a thread's session a moment before its prompt).
"""

from __future__ import annotations

import asyncio
import socket
from typing import AsyncIterator

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.views import Change, SessionView, WorkerView
from meshdbg.wire.connection import pid_alive
from meshdbg.wire.racing import first_of
from meshdbg.wire.vocabulary import State, WatchKind

PID_CHECK_S = 0.2  # how often a local worker without an agent stream is checked for life


async def next_stop(client: ControlClient, session: SessionView) -> bool:
    """Wait for the rank of `session` to stop (True: a stop already there counts, as the watch
    replays the live sessions first) or for its process to end (False)."""
    key = (session.name, session.rank)
    gone = asyncio.ensure_future(_process_gone(session))
    watch = client.watch(exits=True)
    stop = asyncio.ensure_future(_stop_or_exit(watch, key))
    try:
        await first_of(gone, stop)
    finally:
        await asyncio.gather(gone, stop, return_exceptions=True)  # the cancelled one ends before the watch closes
        await watch.aclose()
    return bool(stop.done() and not stop.cancelled() and stop.result())


async def _stop_or_exit(watch: AsyncIterator[Change], key: tuple[str, int]) -> bool:
    """True at the rank's next stop, False when its process exits."""
    async for kind, view, reason in watch:
        if (view.name, view.rank) != key:
            continue
        if kind is WatchKind.EXITED and isinstance(view, WorkerView):
            return False
        if isinstance(view, SessionView) and view.state is State.STOPPED:
            return True
    return False


async def _process_gone(session: SessionView) -> None:
    """Returns once a worker on this host has exited (one elsewhere only its agent can report)."""
    if session.hostname != socket.gethostname():
        await asyncio.Event().wait()
    while pid_alive(session.pid):
        await asyncio.sleep(PID_CHECK_S)
