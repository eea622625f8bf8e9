"""Why a worker's stream broke, said as precisely as this host can tell.

The stream of a worker that died breaks at once; that of a hung one (SIGSTOP) breaks when it
stops answering keepalive pings (meshdbg.wire.keepalive). For a worker on this host, its
process state tells the two apart; for one elsewhere, the message names both.

A session whose worker lives on is kept "not answering" (`keep_while_alive`), since the worker
reconnects and re-registers its stop: until its process is gone (this host), or, when it could
have given up waiting (it runs, or lives elsewhere), until the reconnect window has passed.
"""

from __future__ import annotations

import asyncio
import socket
from typing import NamedTuple

from meshdbg.debugger.sessions import Session
from meshdbg.wire.connection import process_state
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, State

CHECK_S = 0.5  # how often a silent session's process is looked at
GRACE_S = 5.0  # past the window: the worker's own last try, and its goodbye line

_HOSTNAME = socket.gethostname()


class Gone(NamedTuple):
    """Why a worker's stream broke; `alive` when its process is still there (hung, or cut off)."""

    text: str
    alive: bool


def gone_reason(identity: pb.Identity) -> Gone:
    """`rank 1 (pid 42) exited or was killed`, `... is stopped (SIGSTOP) and not answering`,
    or, for a worker elsewhere, `... is not answering (it died, hung, or lost its connection)`."""
    who = f"rank {identity.rank} (pid {identity.pid})"
    if identity.hostname != _HOSTNAME or identity.pid <= 0:
        return Gone(f"{who} is not answering (it died, hung, or lost its connection)", True)
    state = process_state(identity.pid)
    if state is None or state in "ZX":
        return Gone(f"{who} exited or was killed", False)
    if state in "Tt":
        return Gone(f"{who} is stopped (SIGSTOP) and not answering", True)
    return Gone(f"{who} is not answering (it lost its connection to the server)", True)


def alive_here(identity: pb.Identity) -> bool:
    """The process is on this host and still there (running, sleeping or stopped)."""
    if identity.hostname != _HOSTNAME or identity.pid <= 0:
        return False
    state = process_state(identity.pid)
    return state is not None and state not in "ZX"


async def wait_gone(identity: pb.Identity) -> None:
    """Return once the process of `identity` (on this host) is gone."""
    while alive_here(identity):
        await asyncio.sleep(CHECK_S)


def keep_while_alive(session: Session, gone: Gone) -> None:
    """Mark `session` not answering (`gone` says why) and watch it in the background until
    it re-registers, or its worker is gone for good; then it ends as WORKER_GONE."""
    session.on_silent(gone.text)
    task = asyncio.create_task(_watch_silent(session, session.writer))
    session.registry.tasks.add(task)
    task.add_done_callback(session.registry.tasks.discard)


async def _watch_silent(session: Session, stream: object) -> None:
    identity = session.identity
    local = identity.hostname == _HOSTNAME and identity.pid > 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + session.registry.reconnect_s + GRACE_S
    while session.state is State.NOT_ANSWERING and session.writer is stream:
        state = process_state(identity.pid) if local else None
        if local and (state is None or state in "ZX"):
            session.gone = gone_reason(identity).text
            session.on_end("", EndReason.WORKER_GONE)
            return
        if not (local and state is not None and state in "Tt") and loop.time() > deadline:  # it gave up waiting and ran on
            session.on_end(f"*** {session.gone}\n", EndReason.WORKER_GONE)
            return
        await asyncio.sleep(CHECK_S)
