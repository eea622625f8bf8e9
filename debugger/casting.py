"""`cast`, the server's half: one pdb line run on many sessions at once, each result streamed
to the client as it comes.

One task a rank (its command, which runs on past the deadline, since a command under way in
a worker cannot be taken back) and one loop that writes the results in the order they finish:
a cast to 1,024 sessions makes no task, future or timer per rank beyond the command's own, and
its writes never queue on the client stream's lock. A client that asks for `batched` results
gets, in one event, every result that finished while the last event was being written (so a
burst of ranks finishing together costs a few writes, not one each), up to BATCH_BYTES of output.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, Iterator, Sequence

from meshdbg.debugger.deadlines import forget, no_answer_text
from meshdbg.debugger.sessions import OutputListener, Session
from meshdbg.wire.errors import SessionError
from meshdbg.wire.proto import debugger_pb2 as pb

CastWriter = Callable[[pb.CastEvent], Awaitable[None]]
BATCH_BYTES = 1 << 18  # output and errors one event of batched results carries at most (past one result)


async def cast(sessions: Sequence[Session], command: str, write: CastWriter, seconds: float,
               batched: bool = False) -> None:
    """Run `command` on every session, streaming each one's output chunks and then its result
    to `write` (`batched`: the results finished meanwhile in one event); a session with no
    result within `seconds` is reported as not answering (its command runs on, its output to
    the transcript). Returns once every result is written, or the client went away
    (SessionError from `write`: the commands run on without it)."""
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
            ready = [await finished.get()]
            while batched and not finished.empty():
                ready.append(finished.get_nowait())
            for event in _events([_result(running.pop(done), done) for done in ready if done is not None], batched):
                await write(event)
            if None in ready:  # the deadline: the rest are not answering
                break
        silent = [pb.CastResult(session=session.info(), error=no_answer_text(seconds), no_answer=True)
                  for session in running.values()]
        for event in _events(silent, batched):
            await write(event)
    except SessionError:
        pass  # the client went away or was cut off: the sessions are untouched
    finally:
        timer.cancel()
        for left in running:
            left.remove_done_callback(finished.put_nowait)
            left.add_done_callback(forget)  # runs on, unwatched


def _events(results: list[pb.CastResult], batched: bool) -> Iterator[pb.CastEvent]:
    """`results` as events: one each, or (`batched`) as few as BATCH_BYTES allows."""
    if not batched:
        yield from (pb.CastEvent(session_id=r.session.id, result=r) for r in results)
        return
    batch: list[pb.CastResult] = []
    size = 0
    for result in results:
        size += len(result.output) + len(result.error)
        if batch and size > BATCH_BYTES:
            yield pb.CastEvent(results=batch)
            batch, size = [], len(result.output) + len(result.error)
        batch.append(result)
    if batch:
        yield pb.CastEvent(results=batch)


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
