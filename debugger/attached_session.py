"""An attached session, as the control API's client holds it: pdb lines sent, replies and
what others do there received, through a carrier: the attach stream, or (in the server's own
process) the server's side of the attach called in place.

Apart from meshdbg.debugger.control so that a scripted listing does not load it (issue 22:
CLI start); `ControlClient.attach` loads it at the first attach.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Awaitable, Callable, Protocol

import grpc

from meshdbg.debugger.answers import PdbReply, Shared
from meshdbg.debugger.views import SessionView
from meshdbg.wire.chunks import check_line
from meshdbg.wire.errors import MeshdbgError, SessionError
from meshdbg.wire.pending import PendingRequests
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.text import wire_text

if TYPE_CHECKING:
    from meshdbg.debugger.control import ControlClient, InProcessServer

EventTaker = Callable[[pb.AttachEvent], None]  # where a carrier brings the attach's events
ReplyTaker = Callable[[pb.Reply], None]  # where an in-place carrier brings a line's reply, with no event around it


class AttachedSession:
    """A live attach: send pdb lines, get replies; `replay` is what was on screen before.

    Its events (replies, output, completions, what others do on the session, its end) come
    through a carrier: the attach stream, read by one task, so a client may wait for the
    session to end (`wait_ended`) while also sending commands and asking for completions; or,
    in the server's own process, the server's side of the attach called in place (see
    meshdbg.debugger.attached_client). What others do on the session (another console's lines
    and their output, a `cast`, the program's output while pdb waits) goes to `on_shared` as
    it comes, if given.
    """

    def __init__(self, carrier: Callable[[EventTaker, ReplyTaker], "AttachCarrier"],
                 on_shared: Callable[[Shared], None] | None = None) -> None:
        """An attach whose events `carrier(take, take_reply)` brings to `take` (a line's reply
        maybe to `take_reply`; see `over_stream`, `in_place`)."""
        self._carrier = carrier(self._take, self._take_reply)
        self.on_shared = on_shared
        self._reader: asyncio.Task[None] | None = None
        self._reply: asyncio.Future[PdbReply] | None = None
        self._completions: PendingRequests[list[str]] = PendingRequests()
        self._send_lock = asyncio.Lock()
        self._output: list[str] = []  # chunks of the output of the reply under way
        self._on_output: Callable[[str], None] | None = None  # the reply under way's listener (`send`)
        self._ending: asyncio.Future[PdbReply] = asyncio.get_running_loop().create_future()
        self._final: PdbReply | None = None
        self._failure: MeshdbgError | None = None

    session: SessionView  # the attached session and what was on screen: set on entering
    replay: PdbReply

    @classmethod
    def over_stream(cls, client: ControlClient, target: pb.AttachTarget,
                    on_shared: Callable[[Shared], None] | None = None) -> "AttachedSession":
        """An attach over `client`'s gRPC stream (`Debugger.Attach`)."""
        return cls(lambda take, _: _AttachStream(client, target, take), on_shared)

    @classmethod
    def in_place(cls, server: InProcessServer, target: pb.AttachTarget,
                 on_shared: Callable[[Shared], None] | None = None) -> "AttachedSession":
        """An attach answered by `server`, a DebugClient of this process, in place."""
        return cls(lambda take, take_reply: _AttachInPlace(server, target, take, take_reply), on_shared)

    @property
    def ended(self) -> bool:
        return self._ending.done()

    @property
    def broken_by(self) -> MeshdbgError | None:
        """What broke the attach, once it broke (None: it did not, or the session itself ended)."""
        return self._failure

    @property
    def ending(self) -> asyncio.Future[PdbReply]:
        """Done with the session's final reply once it ends: to race with another wait (a typed
        line) through `asyncio.wait`, without a task per wait. Never await it bare from a task
        that may be cancelled (that would cancel it for everyone): `wait_ended` is for that."""
        return self._ending

    async def __aenter__(self) -> "AttachedSession":
        attached, replay = await self._carrier.open()
        self.session = SessionView.from_pb(attached.attached)
        self.replay = PdbReply.from_pb(replay.reply)
        if self.replay.ended:
            self._finish(self.replay)
        self._reader = asyncio.create_task(self._deliver())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        self._carrier.close()

    async def _deliver(self) -> None:
        """The carrier's events, until it is over (or broke: `_failure` says why)."""
        try:
            await self._carrier.deliver()
        except MeshdbgError as exc:
            self._failure = exc
        self._finish(PdbReply("", "", "", "", 0, True, str(self._failure or "the attach stream closed")))

    def _take(self, event: pb.AttachEvent) -> None:
        """One event of the attach, as it comes."""
        if event.HasField("output"):
            if self._on_output is not None:
                self._on_output(event.output.text)
            else:
                self._output.append(event.output.text)
        elif event.HasField("reply"):
            self._take_reply(event.reply)
        elif event.HasField("completions"):
            self._completions.answer(event.completions.request_id, list(event.completions.matches))
        elif event.HasField("shared") and self.on_shared is not None:
            self.on_shared(Shared.from_pb(event.shared))

    def _take_reply(self, reply: pb.Reply) -> None:
        """pdb's reply to the line under way (the output that came ahead of it before it), or
        the session's end."""
        if self._output:
            reply.output = "".join(self._output) + reply.output
            self._output = []
        taken = PdbReply.from_pb(reply)
        if self._reply is not None and not self._reply.done():
            self._reply.set_result(taken)
        if taken.ended:
            self._finish(taken)

    def _finish(self, reply: PdbReply) -> None:
        """The session is over: remember why and release everyone waiting."""
        if self._final is None:
            self._final = reply
            self._ending.set_result(reply)
        if self._reply is not None and not self._reply.done():
            self._reply.set_result(self._final)
        self._completions.close([])

    async def send(self, line: str, eof: bool = False, on_output: Callable[[str], None] | None = None) -> PdbReply:
        """Run one pdb command in the attached session and return pdb's reply; `eof` ends
        the input of what reads it instead (Ctrl-D in `interact`, a `commands` block).

        With `on_output`, the output that comes while the command runs (a long command's, or
        a large one's in chunks) goes to it as it comes, and the reply holds only the rest;
        without, the reply holds all of it."""
        async with self._send_lock:
            if self._final is not None:
                raise self._failure or SessionError(f"the session has ended ({self._final.reason})")
            line = check_line(line)
            self._reply = asyncio.get_running_loop().create_future()
            self._on_output = on_output
            try:
                await self._carrier.send_line(line, eof)
                return await self._reply
            finally:
                self._on_output = None

    async def complete(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        """Completions computed by the remote pdb in the stopped frame ([] once ended)."""
        async def send(request_id: int) -> None:
            await self._carrier.send(pb.AttachRequest(complete=pb.CompleteRequest(
                request_id=request_id, text=wire_text(text), line=wire_text(line), begidx=begidx, endidx=endidx)))

        return await self._completions.request(send)

    async def wait_ended(self) -> PdbReply:
        """Block until the session ends (here, from another client, or the worker exits)."""
        return await asyncio.shield(self._ending)


class AttachCarrier(Protocol):
    """What carries an AttachedSession's requests to the server and its events back (to the
    `take` it was made with)."""

    async def open(self) -> tuple[pb.AttachEvent, pb.AttachEvent]:
        """Attach: the session attached to, then what was on screen (MeshdbgError if not)."""

    async def send_line(self, line: str, eof: bool) -> None:
        """A pdb line (`eof`: the end of pdb's input instead); its output and reply come to
        `take`, or its reply, in place, to `take_reply`."""

    async def send(self, request: pb.AttachRequest) -> None:
        """One request of the client (a completion); its events come to `take`."""

    async def deliver(self) -> None:
        """Bring the events nobody asked for (what others do, the session's end) to `take`
        until the attach is over; MeshdbgError if it broke."""

    def close(self) -> None:
        """Detach: the session is untouched."""


class _AttachStream:
    """An attach over its gRPC stream (`Debugger.Attach`)."""

    def __init__(self, client: ControlClient, target: pb.AttachTarget, take: Callable[[pb.AttachEvent], None]
                 ) -> None:
        self._client, self._target, self._take = client, target, take
        self._opened: grpc.aio.StreamStreamCall[pb.AttachRequest, pb.AttachEvent] | None = None

    @property
    def _call(self) -> grpc.aio.StreamStreamCall[pb.AttachRequest, pb.AttachEvent]:
        """The attach stream, open from `open` on."""
        if self._opened is None:
            raise SessionError("the attach stream is not open (use `async with`)")
        return self._opened

    async def open(self) -> tuple[pb.AttachEvent, pb.AttachEvent]:
        self._opened = self._client.stub.Attach(metadata=self._client.connection.metadata())
        with self._client.translating():
            await self._opened.write(pb.AttachRequest(target=self._target))
            return await self._first(), await self._first()

    async def _first(self) -> pb.AttachEvent:
        event = await self._call.read()
        if not isinstance(event, pb.AttachEvent):  # grpc.aio.EOF
            raise SessionError("the server closed the attach stream")
        return event

    async def send_line(self, line: str, eof: bool) -> None:
        request = pb.AttachRequest()  # filled in place: a nested constructor would copy the Input
        request.input.line, request.input.eof = line, eof
        await self.send(request)

    async def send(self, request: pb.AttachRequest) -> None:
        try:
            await self._call.write(request)
        except (asyncio.InvalidStateError, grpc.RpcError):  # the stream is over (its server killed): `deliver`,
            pass  # reading it, says why and ends every wait with that (a line typed meanwhile raised either,
            # the second as gRPC's "INTERNAL: Internal error from Core" when its write failed in the transport)

    async def deliver(self) -> None:
        async with self._client.cut_off_when_left_behind():
            while isinstance(event := await self._call.read(), pb.AttachEvent):  # until grpc.aio.EOF
                self._take(event)

    def close(self) -> None:
        if self._opened is not None:
            self._opened.cancel()


class AttachedHere(Protocol):
    """The server's side of one attach, in the client's own process
    (meshdbg.debugger.attached_client.AttachedClient, as `InProcessServer.attached` makes it)."""

    def opening(self) -> tuple[pb.AttachEvent, pb.AttachEvent]: ...

    async def answer(self, request: pb.AttachRequest, write: Callable[[pb.AttachEvent], Awaitable[None]]) -> bool: ...

    async def run_line(self, line: str, eof: bool, write: Callable[[pb.AttachEvent], Awaitable[None]],
                       reply_to: Callable[[pb.Reply], Awaitable[None]]) -> bool: ...

    def sharing(self, write: Callable[[pb.AttachEvent], Awaitable[None]]) -> contextlib.AbstractAsyncContextManager[None]: ...

    def close(self) -> None: ...


class _AttachInPlace:
    """An attach in the server's own process: each request is answered in the sender's task,
    its events taken as they are made; no stream, no task between (`meshdbg run`'s console).
    A line's reply is taken as the server's side made it, with no request or event message
    around the line and the reply (issue 22: 6 us of a `p x` inside `meshdbg run`)."""

    def __init__(self, server: InProcessServer, target: pb.AttachTarget, take: EventTaker,
                 take_reply: ReplyTaker) -> None:
        self._server, self._target, self._take, self._take_reply = server, target, take, take_reply
        self._here: AttachedHere | None = None
        self._over = asyncio.Event()  # the session ended with a reply of this client's

    async def _write(self, event: pb.AttachEvent) -> None:
        self._take(event)

    async def _reply_to(self, reply: pb.Reply) -> None:
        self._take_reply(reply)

    async def open(self) -> tuple[pb.AttachEvent, pb.AttachEvent]:
        self._here = self._server.attached(self._target)
        return self._here.opening()

    async def send_line(self, line: str, eof: bool) -> None:
        if await self._opened().run_line(line, eof, self._write, self._reply_to):
            self._over.set()

    async def send(self, request: pb.AttachRequest) -> None:
        if await self._opened().answer(request, self._write):
            self._over.set()

    def _opened(self) -> AttachedHere:
        if self._here is None:
            raise SessionError("the attach is not open (use `async with`)")
        return self._here

    async def deliver(self) -> None:
        if self._here is not None:
            async with self._here.sharing(self._write):
                await self._over.wait()

    def close(self) -> None:
        if self._here is not None:
            self._here.close()
