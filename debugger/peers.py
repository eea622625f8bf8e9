"""Several clients attached to one session: each sees what the others do there.

A person at a second console attached to the same rank must know where it stands, as on a
second terminal showing the same pdb: the lines others send (another console, a `cast`, a
`continue`), the output that follows and pdb's reply, and the program's output while pdb
waits. Each attached client has a `PeerFeed`: a queue the session fills without ever waiting
and the client's attach stream empties. A client that falls behind loses output chunks past
FEED_CHARS (and is told how many characters in one line), never an echo or a reply, and never
holds back the session, its worker or the other clients.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from meshdbg.debugger.answers import Shared
from meshdbg.wire.chunks import OUTPUT_CHUNK_CHARS
from meshdbg.wire.proto import debugger_pb2 as pb

FEED_CHARS = 4 * OUTPUT_CHUNK_CHARS  # output waiting for one slow client, at most


def _output_size(shared: pb.ProgramShared) -> int:
    return len(shared.output.text) if shared.HasField("output") else 0


class PeerFeed:
    """What one attached client is yet to be sent of what others did on its session."""

    def __init__(self, limit: int = FEED_CHARS) -> None:
        self._queue: asyncio.Queue[pb.ProgramShared] = asyncio.Queue()
        self._limit = limit
        self._chars = 0
        self.dropped = 0  # output characters not sent since the last note

    def put(self, shared: pb.ProgramShared) -> None:
        """Queue `shared` for the client (never waits); output past the limit is dropped."""
        size = _output_size(shared)
        if size and self._chars + size > self._limit:
            self.dropped += size
            return
        if self.dropped:
            self._note_dropped()
        self._chars += size
        self._queue.put_nowait(shared)

    def _note_dropped(self) -> None:
        note = f"[meshdbg: {self.dropped} characters of output not shown here: this client fell behind]\n"
        self.dropped = 0
        self._chars += len(note)
        self._queue.put_nowait(pb.ProgramShared(output=pb.OutputChunk(text=note)))

    async def get(self) -> pb.ProgramShared:
        """The next event for the client; call `done()` once it is sent."""
        shared = await self._queue.get()
        self._chars -= _output_size(shared)
        return shared

    def done(self) -> None:
        self._queue.task_done()

    async def drained(self) -> None:
        """Everything queued so far has been sent."""
        await self._queue.join()


def echo(prompt: str, line: str) -> pb.ProgramShared:
    return pb.ProgramShared(echo=pb.ProgramEcho(prompt=prompt, line=line))


def output(text: str) -> pb.ProgramShared:
    return pb.ProgramShared(output=pb.OutputChunk(text=text))


def reply(answer: pb.Reply) -> pb.ProgramShared:
    return pb.ProgramShared(reply=answer)


class SharedLines:
    """A client's side: Shared events as text for a display, in complete lines (the echo as
    pdb's prompt showed the line, then its output and pdb's reply)."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show
        self._partial = ""  # output up to its next newline

    def __call__(self, shared: Shared) -> None:
        if shared.line is not None:
            self._flush()
            self._show(f"{shared.prompt}{shared.line}   [sent by another client]\n")
            return
        text = self._partial + (shared.reply.output if shared.reply else shared.output)
        complete, newline, self._partial = text.rpartition("\n")
        if newline:
            self._show(complete + newline)
        if shared.reply is not None:
            self._flush()

    def _flush(self) -> None:
        if self._partial:
            self._show(self._partial + "\n")
            self._partial = ""
