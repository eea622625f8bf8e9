"""Waiting for a rank to stop in pdb: after `c` (the console and `attach --plain` follow the
rank they let run to its next stop), and on `attach` to a session that has not stopped yet (an
interrupt of a rank blocked in C, still pending; a thread's session a moment before its prompt).
"""

from __future__ import annotations

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.wire.vocabulary import State, WatchKind


async def next_stop(client: ControlClient, session: SessionView) -> bool:
    """Wait for the rank of `session` to stop (True: a stop already there counts, as the watch
    replays the live sessions first) or for its process to end (False), which the server hears
    from the rank's agent stream or, without one, from the session streams its process parks
    between stops (meshdbg.debugger.hook_processes). An end before the watch began is in the
    server's list of workers, looked at once the watch has replayed what is live (a script's
    `attach --plain` reads its next line before it follows the rank: that one waited for good)."""
    key = (session.name, session.rank)
    watch = client.watch(exits=True)
    try:
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
    finally:
        await watch.aclose()


async def _has_exited(client: ControlClient, session: SessionView) -> bool:
    """Whether the server lists the process of `session` as exited."""
    return any((w.hostname, w.pid) == (session.hostname, session.pid) and w.state is State.EXITED
               for w in await client.workers())
