"""One client attached to one session, as the server serves it, whatever carries its lines.

A remote client's attach is a gRPC stream (`DebuggerServicer.Attach`); a client in the
server's own process and loop (`meshdbg run`'s console, `run --dap`) calls the same object
straight from its task (`ControlClient.beside`), with no stream, no handler task and no
reader task in between: in `run`, a `p x` is then one hop, as its floor (issue 22). Both
get the same events in the same order: the attached session and its replay first, then each
line's output and reply, what others do on the session as it comes, and the session's end.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Awaitable, Callable

from meshdbg.wire.errors import SessionError, UsageError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import State, wire_value
from meshdbg.debugger.peers import PeerFeed
from meshdbg.debugger.registry import SessionRegistry

EventWriter = Callable[[pb.AttachEvent], Awaitable[None]]  # to the client; SessionError once it is gone


class AttachedClient:
    """A client's place on the session `target` names (MeshdbgError when none): it sees what
    others do there from the replay on, until `close`."""

    def __init__(self, registry: SessionRegistry, target: pb.AttachTarget) -> None:
        if target.WhichOneof("kind") == "session_id":
            self.session = registry.get(target.session_id)
        else:
            self.session = registry.by_rank(target.rank.rank, target.rank.name)
        self._feed = PeerFeed()
        # A line of this client's under way, whose reply tells the session's end if it ends
        # meanwhile (`_announce_end` waits for it), and whether a reply of its told it.
        self._answered = asyncio.Event()
        self._answered.set()
        self._end_told = False
        self._replay = self.session.replay(target.following, target.program_shown)
        self.session.subscribe(self._feed)  # from the replay on, nothing others do here goes unseen

    def opening(self) -> tuple[pb.AttachEvent, pb.AttachEvent]:
        """What the client is sent first: the session, then what was on screen."""
        return pb.AttachEvent(attached=self.session.info()), pb.AttachEvent(reply=self._replay)

    def close(self) -> None:
        self.session.unsubscribe(self._feed)

    async def answer(self, request: pb.AttachRequest, write: EventWriter) -> bool:
        """Answer one request of the client (a pdb line, run as this client's, or a completion)
        through `write`; whether the session ended with it."""
        kind = request.WhichOneof("kind")
        if kind == "input":
            async def reply_to(reply: pb.Reply) -> None:
                await write(pb.AttachEvent(reply=reply))

            return await self.run_line(request.input.line, request.input.eof, write, reply_to)
        if kind == "complete":
            c = request.complete
            matches = await self.session.complete(c.text, c.line, c.begidx, c.endidx)
            await write(pb.AttachEvent(completions=pb.Completions(request_id=c.request_id, matches=matches)))
        return False

    async def run_line(self, line: str, eof: bool, write: EventWriter,
                       reply_to: Callable[[pb.Reply], Awaitable[None]]) -> bool:
        """Run one pdb line as this client's (`eof`: end pdb's input instead): its output
        to `write` as it comes, then its reply to `reply_to` (an event on the stream, or, in
        place, the reply itself); whether the session ended with it. The reply goes before any
        announcement of the session's end (`_announce_end`)."""
        async def forward(text: str) -> None:
            await write(pb.AttachEvent(output=pb.OutputChunk(text=text)))

        self._answered.clear()
        try:
            try:
                reply = await self.session.execute(line, forward, eof=eof, by=self._feed)
            except (SessionError, UsageError) as exc:
                reply = self._refused(exc)
            self._end_told = reply.ended
            await reply_to(reply)
        finally:
            self._answered.set()
        return reply.ended

    def _refused(self, exc: SessionError | UsageError) -> pb.Reply:
        """The reply to a line that could not run: why, where the session stands."""
        session = self.session
        return pb.Reply(output=f"*** {exc}\n", prompt=session.prompt, frame=session.frame,
                        ended=session.state is State.EXITED, reason=wire_value(session.end_reason),
                        prompt_kind=session.prompt_kind.pb)

    @contextlib.asynccontextmanager
    async def sharing(self, write: EventWriter) -> AsyncIterator[None]:
        """While inside: what others do on the session goes to `write` as it comes, and the
        session's end once it ends elsewhere (continue, exit, kill) after all of that."""
        sharer = asyncio.create_task(self._share(write))
        watcher = asyncio.create_task(self._announce_end(write))
        try:
            yield
        finally:
            watcher.cancel()
            sharer.cancel()

    async def _share(self, write: EventWriter) -> None:
        while True:
            shared = await self._feed.get()
            try:
                await write(pb.AttachEvent(shared=shared))
            except SessionError:  # the client went away: its stream ends on its own
                return
            finally:
                self._feed.done()

    async def _announce_end(self, write: EventWriter) -> None:
        """The session's end, when no reply of this client's told it: a `q` of its own is
        answered by its reply, output included, and an end announced first would be taken
        for that reply. It was, 2 times in 1,000 under load: the worker's end can arrive while
        the line's command still waits for its write to the worker to complete, and this task
        then woke first."""
        session = self.session
        await session.ended.wait()
        await self._feed.drained()
        await self._answered.wait()
        if self._end_told:
            return
        with contextlib.suppress(SessionError):  # the client went away meanwhile
            await write(pb.AttachEvent(reply=pb.Reply(frame=session.frame, ended=True,
                                                      reason=wire_value(session.end_reason))))
