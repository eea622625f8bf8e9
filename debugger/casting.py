"""`cast`, the server's half: one pdb line run on many sessions at once, each result streamed
to the client as it comes.

One task a rank (its command, which runs on past the deadline, since a command under way in
a worker cannot be taken back) and one loop that writes the results in the order they finish:
a cast to 1,024 sessions makes no task, future or timer per rank beyond the command's own, and
its writes never queue on the client stream's lock.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Sequence

from meshdbg.debugger.deadlines import forget, no_answer_text
from meshdbg.debugger.sessions import OutputListener, Session
from meshdbg.wire.errors import SessionError
from meshdbg.wire.proto import debugger_pb2 as pb

CastWriter = Callable[[pb.CastEvent], Awaitable[None]]


async def cast(sessions: Sequence[Session], command: str, write: CastWriter, seconds: float) -> None:
    """Run `command` on every session, streaming each one's output chunks and then its result
    to `write`; a session with no result within `seconds` is reported as not answering (its
    command runs on, its output to the transcript). Returns once every result is written, or
    the client went away (SessionError from `write`: the commands run on without it)."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Queue[asyncio.Future[pb.Reply] | None] = asyncio.Queue()
    running: dict[asyncio.Future[pb.Reply], Session] = {}
    for session in sessions:
        task = asyncio.ensure_future(session.execute(command, _forwarder(session, write)))
        running[task] = session
        task.add_done_callback(finished.put_nowait)
    timer = loop.call_later(seconds, finished.put_nowait, None)
    try:
        while running:
            done = await finished.get()
            if done is None:  # the deadline: the rest are not answering
                break
            await write(pb.CastEvent(session_id=running[done].id, result=_result(running.pop(done), done)))
        for session in list(running.values()):
            await write(pb.CastEvent(session_id=session.id, result=pb.CastResult(
                session=session.info(), error=no_answer_text(seconds), no_answer=True)))
    except SessionError:
        pass  # the client went away or was cut off: the sessions are untouched
    finally:
        timer.cancel()
        for left in running:
            left.remove_done_callback(finished.put_nowait)
            left.add_done_callback(forget)  # runs on, unwatched


def _forwarder(session: Session, write: CastWriter) -> OutputListener:
    async def forward(text: str) -> None:
        await write(pb.CastEvent(session_id=session.id, output=pb.OutputChunk(text=text)))
    return forward


def _result(session: Session, done: asyncio.Future[pb.Reply]) -> pb.CastResult:
    """A finished command's result (a failure when the worker died or hung mid-command, not an
    empty success); anything but a SessionError is a bug, and raises."""
    try:
        reply, error = done.result(), session.gone
    except SessionError as exc:
        reply, error = pb.Reply(), str(exc)
    return pb.CastResult(session=session.info(), output="" if error else reply.output, error=error,
                         ended=reply.ended)
