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

PID_CHECK_S = 0.2  # how often a local worker's process is checked for life


async def next_stop(client: ControlClient, session: SessionView) -> bool:
    """Wait for the rank of `session` to stop (True: a stop already there counts, as the watch
    replays the live sessions first) or for its process to end (False).

    The server tells a process's end when it is the rank's (its agent stream's end, or, for a
    process with none, the end of the session streams it parks between stops:
    meshdbg.debugger.hook_processes); an end before the watch began is in its list of workers,
    looked at once the watch has replayed what is live (a script's `attach --plain` reads its
    next line before it follows the rank: that one waited for good). A process of a rank that
    lives on in another (a pool's child) ends with no such word: on this host its pid says it."""
    watch = client.watch(exits=True)
    stop = asyncio.ensure_future(_stop_or_exit(client, watch, session))
    gone = asyncio.ensure_future(_process_gone(session))
    try:
        await first_of(stop, gone)
    finally:
        await asyncio.gather(gone, stop, return_exceptions=True)  # the cancelled one ends before the watch closes
        await watch.aclose()
    return bool(stop.done() and not stop.cancelled() and stop.result())


async def _stop_or_exit(client: ControlClient, watch: AsyncIterator[Change], session: SessionView) -> bool:
    """True at the rank's next stop, False when its process has exited (or it is said to)."""
    key = (session.name, session.rank)
    async for kind, view, _ in watch:
        if kind is WatchKind.SYNCED:
            if await _has_exited(client, session):
                return False
        elif (view.name, view.rank) != key:
            continue
        elif kind is WatchKind.EXITED and isinstance(view, WorkerView):
            return False
        elif isinstance(view, SessionView) and view.state is State.STOPPED:
            return True
    return False


async def _has_exited(client: ControlClient, session: SessionView) -> bool:
    """Whether the server lists the process of `session` as exited."""
    return any((w.hostname, w.pid) == (session.hostname, session.pid) and w.state is State.EXITED
               for w in await client.workers())


async def _process_gone(session: SessionView) -> None:
    """Returns once a worker on this host has exited (one elsewhere only the server can report)."""
    if session.hostname != socket.gethostname():
        await asyncio.Event().wait()
    while pid_alive(session.pid):
        await asyncio.sleep(PID_CHECK_S)
