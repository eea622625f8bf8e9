"""Pause-safe collectives, the server's half: while any rank is paused in pdb, every worker's
torch.distributed process groups get a long timeout; when none is, their own timeouts return.

The guard follows the session registry's watch stream (every session is a rank paused in
pdb, including while it runs one command) and tells the workers through their agent streams
(WorkerRegistry.set_collectives_timeout, which also tells a worker that connects during a
pause). The worker's half is meshdbg.worker.collectives. The timeout while paused is
MESHDBG_PAUSE_TIMEOUT seconds on the server (default 3600, as torch.distributed.breakpoint;
0 turns the guard off).
"""

from __future__ import annotations

from meshdbg.debugger.registry import SessionRegistry
from meshdbg.debugger.sessions import Session
from meshdbg.debugger.workers import WorkerRegistry
from meshdbg.wire.vocabulary import WatchKind


PAUSE_KINDS = frozenset({WatchKind.OPENED, WatchKind.CLOSED})  # the changes a pause begins or ends with


async def guard_collectives(sessions: SessionRegistry, workers: WorkerRegistry, timeout_s: float) -> None:
    """Run until cancelled: extend while a session is open, restore when the last one closes."""
    if timeout_s <= 0:
        return

    def pause_begins_or_ends(kind: WatchKind, session: Session) -> bool:
        """The first session opened or the last one closed (never a command's state flips,
        nor the 31 other closes of a `continue` to 32)."""
        return (kind is WatchKind.OPENED and len(sessions) == 1) or (kind is WatchKind.CLOSED and not len(sessions))

    async for _ in sessions.watch(interest=pause_begins_or_ends, kinds=PAUSE_KINDS):  # the replay of live sessions included
        workers.set_collectives_timeout(timeout_s if len(sessions) else 0.0)
