"""Waiting for a rank to stop in pdb: after `c` (the console and `attach --plain` follow the
rank they let run to its next stop), and on `attach` to a session that has not stopped yet (an
interrupt of a rank blocked in C, still pending; a thread's session a moment before its prompt).
"""

from __future__ import annotations

from typing import AsyncIterator

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.views import Change, SessionView, WorkerView
from meshdbg.wire.vocabulary import State, WatchKind


async def next_stop(client: ControlClient, session: SessionView) -> bool:
    """Wait for the rank of `session` to stop (True: a stop already there counts, as the watch
    replays the live sessions first) or for its process to end (False: the server hears it from
    the rank's agent stream or, without one, from the session streams it parks between stops:
    meshdbg.debugger.hook_processes)."""
    watch = client.watch(exits=True)
    try:
        return await _stop_or_exit(watch, (session.name, session.rank))
    finally:
        await watch.aclose()


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
