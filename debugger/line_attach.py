"""`meshdbg attach RANK` without a console: line-based pdb over the control API.

Reads lines from stdin (with the terminal's line editing when it is one) until `detach`, EOF,
or the rank is gone; useful from scripts and dumb terminals. As local pdb does, it follows
the rank across `c`: while stdin has another line, it waits for the rank's next stop,
attaches there and goes on. However the session ends while a line is being read (its worker
dies, another client continues it, the server stops), it ends at once with one line and an
exit status. The read runs in a daemon thread, so nothing waits for it at exit; off a terminal
it reads file descriptor 0 itself, never through sys.stdin's buffer, whose lock that thread
would hold while the interpreter shuts down ("Fatal Python error: _enter_buffered_busy").
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from typing import AsyncIterator, Awaitable

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.peers import SharedLines
from meshdbg.debugger.views import Change, PdbReply, SessionView, WorkerView
from meshdbg.debugger.format import rank_label
from meshdbg.wire.connection import pid_alive
from meshdbg.wire.racing import first_of
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

DETACH_WORDS = ("detach",)
PID_CHECK_S = 0.2  # how often a local worker without an agent stream is checked for life


def _show(reply: PdbReply) -> None:
    if reply.output:
        sys.stdout.write(reply.output if reply.output.endswith("\n") else reply.output + "\n")
    if reply.ended and reply.reason is not EndReason.CONTINUED:
        sys.stdout.write(f"meshdbg: session ended ({reply.reason})\n")
    sys.stdout.flush()


class _Stdin:
    """Lines of stdin for the event loop, one read at a time: a read still under way when its
    session ended is the one the next caller gets, so no line is lost to a second reader."""

    def __init__(self) -> None:
        self._unread = b""  # bytes read past the last line (off a terminal)
        self._in_flight: asyncio.Future[str | None] | None = None

    def line(self, prompt: str) -> asyncio.Future[str | None]:
        if self._in_flight is not None and not self._in_flight.done():
            return self._in_flight
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        on_terminal = sys.stdin.isatty() and sys.stdout.isatty()  # input() edits lines without sys.stdin's buffer
        if not on_terminal:
            sys.stdout.write(prompt)
            sys.stdout.flush()

        def read() -> None:
            try:
                line = input(prompt) if on_terminal else self._read_fd()
            except (EOFError, OSError, ValueError, KeyboardInterrupt):
                line = None
            def settle() -> None:
                if not future.done():
                    future.set_result(line)

            loop.call_soon_threadsafe(settle)

        threading.Thread(target=read, daemon=True, name="meshdbg-stdin").start()
        self._in_flight = future
        return future

    def _read_fd(self) -> str | None:
        """The next line of file descriptor 0 without its newline; None at EOF."""
        while b"\n" not in self._unread:
            chunk = os.read(0, 65536)
            if not chunk:
                rest, self._unread = self._unread, b""
                return rest.decode(errors="replace") if rest else None
            self._unread += chunk
        line, _, self._unread = self._unread.partition(b"\n")
        return line.removesuffix(b"\r").decode(errors="replace")


_stdin = _Stdin()
def _show_text(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def read_line(prompt: str) -> asyncio.Future[str | None]:
    """The next line of stdin (None at EOF), read by a daemon thread."""
    return _stdin.line(prompt)


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
                        return _ended_elsewhere(session, line)
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


def _ended_elsewhere(session: SessionView, reply: PdbReply) -> int:
    """Say in one line why the session ended while we waited for input; the exit status:
    0 when its rank runs on (another client continued it), 1 when it or the server is gone."""
    _show(reply)  # its output, and `session ended (why)` unless it was continued
    if reply.reason is EndReason.CONTINUED:
        print(f"meshdbg: {rank_label(session)} was continued by another client; detached", flush=True)
        return 0
    server_gone = reply.reason is EndReason.SERVER_STOPPED
    return 0 if isinstance(reply.reason, EndReason) and reply.reason.rank_runs_on and not server_gone else 1


async def _line_unless_ended(prompt: str, ended: Awaitable[PdbReply]) -> str | None | PdbReply:
    """The next stdin line, or the session's final reply if it ends first (its worker died)."""
    line = asyncio.shield(read_line(prompt))  # a read still under way is the next caller's
    end = asyncio.ensure_future(ended)
    if line in await first_of(line, end):
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
        await first_of(gone, stop)
    finally:
        await asyncio.gather(gone, stop, return_exceptions=True)  # the cancelled one ends before the watch closes
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
