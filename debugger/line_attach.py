"""`meshdbg attach RANK` without a console: line-based pdb over the control API.

Reads lines from stdin (with the terminal's line editing when it is one) until `detach`, EOF,
or the rank is gone; useful from scripts and dumb terminals. As local pdb does, it follows
the rank across `c`: while stdin has another line, it waits for the rank's next stop,
attaches there and goes on. The worker's death ends it at once, with a message, even while
a line is being read (the read runs in a daemon thread, so nothing waits for it at exit).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from typing import AsyncIterator, Awaitable

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.peers import SharedLines
from meshdbg.debugger.views import Change, PdbReply, SessionView, WorkerView
from meshdbg.debugger.format import rank_label
from meshdbg.wire.connection import pid_alive
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

DETACH_WORDS = ("detach",)
PID_CHECK_S = 0.2  # how often a local worker without an agent stream is checked for life


def _show(reply: PdbReply) -> None:
    if reply.output:
        sys.stdout.write(reply.output if reply.output.endswith("\n") else reply.output + "\n")
    if reply.ended and reply.reason is not EndReason.CONTINUED:
        sys.stdout.write(f"meshdbg: session ended ({reply.reason})\n")
    sys.stdout.flush()


def _show_text(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def read_line(prompt: str) -> asyncio.Future[str | None]:
    """The next line of stdin (None at EOF), read by a daemon thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()

    def read() -> None:
        try:
            line: str | None = input(prompt)
        except EOFError:
            line = None
        except (OSError, ValueError, KeyboardInterrupt):
            line = None
        loop.call_soon_threadsafe(lambda: future.done() or future.set_result(line))

    threading.Thread(target=read, daemon=True, name="meshdbg-stdin").start()
    return future


async def attach_lines(client: ControlClient, rank: int | None = None, session_id: int | None = None) -> int:
    """Drive one rank line by line; the session stays paused when we detach."""
    pending: str | None = None  # a line read after `c`, for the rank's next stop
    while True:
        async with client.attach(rank=rank, session_id=session_id, on_shared=SharedLines(_show_text)) as attached:
            session = attached.session
            print(f"meshdbg: attached to rank {session.rank} ({session.coords_text or 'no coords'}, "
                  f"{session.thread}); `detach` or Ctrl-D leaves it paused", flush=True)
            _show(attached.replay)
            reply = attached.replay
            while not reply.ended:
                if pending is None:
                    line = await _line_unless_ended(reply.prompt or "(Pdb) ", attached.wait_ended())
                    if isinstance(line, PdbReply):
                        _show(line)
                        return 0
                else:
                    line, pending = pending, None
                    print(f"{reply.prompt or '(Pdb) '}{line}", flush=True)
                if line is None:
                    print()
                    return 0
                if line.strip() in DETACH_WORDS:
                    return 0
                reply = await attached.send(line)
                _show(reply)
        if reply.reason is not EndReason.CONTINUED or session_id is not None:
            return 0
        pending = await read_line(reply.prompt or "(Pdb) ")
        if pending is None or pending.strip() in DETACH_WORDS:
            print()
            return 0
        print(f"meshdbg: {rank_label(session)} continued; waiting for its next stop", flush=True)
        if not await next_stop(client, session):
            return 0
        rank = session.rank


async def _line_unless_ended(prompt: str, ended: Awaitable[PdbReply]) -> str | None | PdbReply:
    """The next stdin line, or the session's final reply if it ends first (its worker died)."""
    line = read_line(prompt)
    end = asyncio.ensure_future(ended)
    try:
        await asyncio.wait([line, end], return_when=asyncio.FIRST_COMPLETED)
    finally:
        end.cancel()
    if line.done():
        return line.result()
    print(flush=True)
    return end.result()


async def next_stop(client: ControlClient, session: SessionView) -> bool:
    """Wait for the rank of `session` to stop again (True) or to end (False, said on stdout)."""
    key = (session.name, session.rank)
    gone = asyncio.ensure_future(_process_gone(session))
    watch = client.watch(exits=True)
    stop = asyncio.ensure_future(_stop_or_exit(watch, key))
    try:
        await asyncio.wait([gone, stop], return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        stop.cancel()
        await asyncio.gather(gone, stop, return_exceptions=True)
        await watch.aclose()
    stopped = stop.done() and not stop.cancelled() and stop.result()
    if not stopped:
        print(f"meshdbg: {rank_label(session)} exited; nothing more to attach to", flush=True)
    return bool(stopped)


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
