"""The control API: what the CLI, the console and scripts use to drive sessions.

    async with await ControlClient.connect() as client:
        for session in await client.list():
            print(session.rank, session.coords, session.lineno)
        results = await client.cast("ranks(hosts=1)", "p loss")
        async with client.attach(rank=2) as pdb:
            reply = await pdb.send("n")
        await client.resume("all")

Every call is authenticated; gRPC failures surface as meshdbg.wire.errors exceptions.
"""

from __future__ import annotations

import asyncio
import builtins  # ControlClient.list hides the builtin inside the class
import contextlib
from typing import TYPE_CHECKING, AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator, Protocol, Sequence

import grpc

from meshdbg.wire.pending import PendingRequests
from meshdbg.debugger.views import (CastResult, Change, CompareView, HostView, PdbReply, RankStacksView, Sessions,
                                    SessionView, Shared, Waited, WorkerView, change_of)
from meshdbg.wire.chunks import check_line
from meshdbg.wire.connection import ConnectionInfo, resolve_connection
from meshdbg.wire.handshake import handshake
from meshdbg.wire.keepalive import CLIENT_KEEPALIVE
from meshdbg.wire.tls import channel_credentials
from meshdbg.debugger.deadlines import cut_off_text
from meshdbg.wire.errors import ConnectionFailed, MeshdbgError, SessionError
from meshdbg.wire.status import error_from_rpc
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from meshdbg.wire.text import wire_text
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from meshdbg.debugger.pipeline_view import PipelineRankView

CONNECT_TIMEOUT_S = 3.0
# Listings of any length; a hung server is noticed in ~4 s (meshdbg.wire.keepalive).
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1), *CLIENT_KEEPALIVE]


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

    def __init__(self, carrier: Callable[[Callable[[pb.AttachEvent], None]], "AttachCarrier"],
                 on_shared: Callable[[Shared], None] | None = None) -> None:
        self._carrier = carrier(self._take)
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

    @property
    def ended(self) -> bool:
        return self._ending.done()

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
            if self._output:
                event.reply.output = "".join(self._output) + event.reply.output
                self._output = []
            reply = PdbReply.from_pb(event.reply)
            if self._reply is not None and not self._reply.done():
                self._reply.set_result(reply)
            if reply.ended:
                self._finish(reply)
        elif event.HasField("completions"):
            self._completions.answer(event.completions.request_id, list(event.completions.matches))
        elif event.HasField("shared") and self.on_shared is not None:
            self.on_shared(Shared.from_pb(event.shared))

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
                await self._carrier.send(pb.AttachRequest(input=pb.Input(line=line, eof=eof)))
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

    async def send(self, request: pb.AttachRequest) -> None:
        """One request of the client; its events come to `take`."""

    async def deliver(self) -> None:
        """Bring the events nobody asked for (what others do, the session's end) to `take`
        until the attach is over; MeshdbgError if it broke."""

    def close(self) -> None:
        """Detach: the session is untouched."""


class _AttachStream:
    """An attach over its gRPC stream (`Debugger.Attach`)."""

    def __init__(self, client: "ControlClient", target: pb.AttachTarget, take: Callable[[pb.AttachEvent], None]
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

    async def send(self, request: pb.AttachRequest) -> None:
        with self._client.translating():
            await self._call.write(request)

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

    def sharing(self, write: Callable[[pb.AttachEvent], Awaitable[None]]) -> contextlib.AbstractAsyncContextManager[None]: ...

    def close(self) -> None: ...


class _AttachInPlace:
    """An attach in the server's own process: each request is answered in the sender's task,
    its events taken as they are made; no stream, no task between (`meshdbg run`'s console)."""

    def __init__(self, server: "InProcessServer", target: pb.AttachTarget, take: Callable[[pb.AttachEvent], None]
                 ) -> None:
        self._server, self._target, self._take = server, target, take
        self._here: AttachedHere | None = None
        self._over = asyncio.Event()  # the session ended with a reply of this client's

    async def _write(self, event: pb.AttachEvent) -> None:
        self._take(event)

    async def open(self) -> tuple[pb.AttachEvent, pb.AttachEvent]:
        self._here = self._server.attached(self._target)
        return self._here.opening()

    async def send(self, request: pb.AttachRequest) -> None:
        if self._here is None:
            raise SessionError("the attach is not open (use `async with`)")
        if await self._here.answer(request, self._write):
            self._over.set()

    async def deliver(self) -> None:
        if self._here is not None:
            async with self._here.sharing(self._write):
                await self._over.wait()

    def close(self) -> None:
        if self._here is not None:
            self._here.close()


class InProcessServer(Protocol):
    """A DebugClient, as a client in its own process sees it (`meshdbg run`'s console)."""

    @property
    def connection(self) -> ConnectionInfo: ...

    def local_channel(self) -> grpc.aio.Channel: ...

    def attached(self, target: pb.AttachTarget) -> AttachedHere: ...


class ControlClient:
    """An authenticated connection to one DebugClient's control API."""

    def __init__(self, connection: ConnectionInfo, channel: grpc.aio.Channel | None = None) -> None:
        """A client of the server at `connection`, over `channel` if given (the server's own
        `local_channel()` in its process), else a gRPC channel of its own."""
        self.connection = connection
        if channel is None:
            credentials = channel_credentials(connection.addr, connection.fingerprint)
            channel = (grpc.aio.secure_channel(connection.addr, credentials, options=CHANNEL_OPTIONS) if credentials
                       else grpc.aio.insecure_channel(connection.addr, options=CHANNEL_OPTIONS))
        self.channel = channel
        self.stub = pb_grpc.DebuggerStub(self.channel)
        self._beside: InProcessServer | None = None  # the server of this process, whose attach is called in place

    @classmethod
    def beside(cls, server: InProcessServer) -> "ControlClient":
        """A client of `server` from the server's own process and loop: calls go straight to
        its handlers (meshdbg.debugger.local_channel), one hop less per command than a socket,
        and an attach's lines go straight to the server's side of it (no stream in between)."""
        client = cls(server.connection, server.local_channel())
        client._beside = server
        return client

    @classmethod
    async def connect(cls, addr: str | None = None) -> "ControlClient":
        """Resolve the server (DESIGN §2), check it answers and speaks our protocol."""
        client = cls(resolve_connection(addr))
        try:
            await client.handshake()
        except MeshdbgError:
            await client.close()
            raise
        return client

    async def __aenter__(self) -> "ControlClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.channel.close()

    def translating(self) -> contextlib.AbstractContextManager[None]:
        return translating(self.connection.addr)

    async def handshake(self) -> None:
        """Check the server answers and speaks our protocol (a MeshdbgError says why not)."""
        await handshake(self.channel, self.connection, CONNECT_TIMEOUT_S)

    @contextlib.asynccontextmanager
    async def cut_off_when_left_behind(self) -> AsyncIterator[None]:
        """`translating`, for a stream of output: when it breaks but the server still answers,
        the server cut this client off for falling behind (it was stopped, or its terminal
        froze), and SessionError says so, instead of "no server reachable"."""
        try:
            with self.translating():
                yield
        except ConnectionFailed as lost:
            try:
                await self.handshake()
            except MeshdbgError:
                raise lost from None  # the server is gone
            raise SessionError(cut_off_text()) from lost

    async def list(self) -> Sessions:
        """The sessions the server holds, as a read-only list (a view made per session read)."""
        with self.translating():
            reply = await self.stub.List(pb.ListRequest(), metadata=self.connection.metadata())
        return Sessions(reply.sessions)

    async def hosts(self) -> builtins.list[HostView]:
        """The hosts of the server's `run` ([] for a `serve`, which places no ranks)."""
        try:
            reply = await host_grpc.HostsStub(self.channel).ListHosts(host_pb.HostListRequest(),
                                                                       metadata=self.connection.metadata())
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                return []
            raise error_from_rpc(exc, self.connection.addr) from None
        return [HostView.from_pb(info) for info in reply.hosts]

    async def workers(self) -> builtins.list[WorkerView]:
        """Every worker the server knows (through agent streams), stopped in pdb or not."""
        with self.translating():
            reply = await self.stub.List(pb.ListRequest(all=True), metadata=self.connection.metadata())
        return [WorkerView.from_pb(info) for info in reply.workers]

    async def interrupt(self, selection: str = "", timeout_s: float = 0) -> Waited:
        """Stop the selected (default: all) ranks in pdb; the ranks asked to stop, and (in
        `no_answer`) those whose command could not be broken into within `timeout_s` (0: the
        server's default).

        A running rank's main thread opens a session (reason "interrupt") where it stands; a
        session running a command (`n` over a long loop) stops at its next Python line, as
        with Ctrl-C in local pdb.
        """
        with self.translating():
            reply = await self.stub.Interrupt(pb.InterruptRequest(selection=selection, timeout_s=timeout_s),
                                              metadata=self.connection.metadata())
        return Waited(reply.ranks, (info.identity.rank for info in reply.no_answer))

    async def break_in(self, session_id: int) -> SessionView:
        """Interrupt the command one session runs; the session, its frame where it runs now.

        The command's reply arrives as usual once the thread stops (at once in Python code;
        when the call returns if it is blocked in C). SessionError if it runs no command, or
        did not answer the interrupt in time.
        """
        with self.translating():
            reply = await self.stub.Interrupt(pb.InterruptRequest(session_id=session_id),
                                              metadata=self.connection.metadata())
        if not reply.sessions:
            raise SessionError(f"rank {reply.no_answer[0].identity.rank} did not answer the interrupt in time")
        return SessionView.from_pb(reply.sessions[0])

    async def cast(self, selection: str, command: str, timeout_s: float = 0) -> builtins.list[CastResult]:
        """Run `command` on every selected session concurrently; results by rank. A rank that
        has not answered within `timeout_s` (0: the server's default) is a failed result with
        `no_answer`.

        Each rank's output arrives in chunks as it is written, so no output is too large.
        """
        command = check_line(command)
        outputs: dict[int, list[str]] = {}
        results: list[CastResult] = []
        call = self.stub.Cast(pb.CastRequest(selection=wire_text(selection), command=command, timeout_s=timeout_s,
                                             batched=True), metadata=self.connection.metadata())
        async with self.cut_off_when_left_behind():
            async for event in call:
                if event.HasField("output"):
                    outputs.setdefault(event.session_id, []).append(event.output.text)
                    continue
                for r in event.results:
                    output = "".join(outputs.pop(r.session.id, [])) + r.output
                    results.append(CastResult(SessionView.from_pb(r.session), output, r.error, r.ended, r.no_answer))
        return sorted(results, key=lambda r: (r.session.rank, r.session.name, r.session.thread_id, r.session.id))

    async def stacks(self, selection: str = "", all_threads: bool = False, timeout_s: float = 0
                     ) -> builtins.list[RankStacksView]:
        """The Python stacks of the selected (default: all) ranks, running, stopped or stuck; by rank.

        Each says where it came from (the rank's agent, a pdb session, or py-spy from outside);
        a rank that answered neither way has source NONE and an `error`. Bounded: each rank
        is asked from inside for `timeout_s` (0: the server's default), then from outside.
        """
        with self.translating():
            reply = await self.stub.Stacks(pb.StacksRequest(selection=selection, all_threads=all_threads,
                                                            timeout_s=timeout_s), metadata=self.connection.metadata())
        return [RankStacksView.from_pb(r) for r in reply.ranks]

    async def pipeline(self, selection: str = "", add_breaks: Sequence[str] = (), clear_breaks: bool = False,
                       timings: bool = False) -> builtins.list["PipelineRankView"]:
        """Where each selected (default: every) rank's pipeline runtime stands, by rank; its
        action breakpoints cleared (`clear_breaks`) then extended (`add_breaks`) first; with
        `timings`, the recorded action times of its last steps. Bounded, as `stacks`."""
        from meshdbg.debugger.pipeline_view import PipelineRankView  # only for the verbs that ask

        query = pb.PipelineQuery(selection=selection, add_breaks=add_breaks, clear_breaks=clear_breaks, timings=timings)
        with self.translating():
            reply = await self.stub.Pipeline(query, metadata=self.connection.metadata())
        return [PipelineRankView.from_pb(rank) for rank in reply.ranks]

    async def compare(self, selection: str, expression: str, timeout_s: float = 0) -> builtins.list[CompareView]:
        """EXPR's value (as text; a summary for tensors/arrays) on each selected stopped rank."""
        with self.translating():
            reply = await self.stub.Compare(pb.CompareRequest(selection=selection, expression=expression,
                                                              timeout_s=timeout_s), metadata=self.connection.metadata())
        return [CompareView(SessionView.from_pb(r.session), r.value, r.error, r.no_answer) for r in reply.results]

    async def query(self, session_id: int, question: pb.QueryRequest, timeout_s: float = 0) -> pb.QueryAnswer:
        """One stopped session's answer to a structured question (frames, scopes, variables,
        an expression, ...; see QueryRequest in protos/debugger.proto). What the worker could
        not answer is the answer's `error`; SessionError when the session is not stopped at its
        prompt or does not answer in time."""
        with self.translating():
            return await self.stub.Query(pb.QuerySessionRequest(session_id=session_id, query=question, timeout_s=timeout_s),
                                         metadata=self.connection.metadata())

    async def resume(self, selection: str = "", clear_breakpoints: bool = False, timeout_s: float = 0) -> Waited:
        """Continue the selected (default: all) stopped sessions; their breakpoints stay unless
        `clear_breakpoints`. The sessions resumed, and (in `no_answer`) the ranks that had not
        answered within `timeout_s` (0: the server's default)."""
        with self.translating():
            reply = await self.stub.Continue(pb.ContinueRequest(selection=selection, clear_breakpoints=clear_breakpoints,
                                                                timeout_s=timeout_s), metadata=self.connection.metadata())
        return Waited((SessionView.from_pb(info) for info in reply.resumed),
                      (info.identity.rank for info in reply.no_answer))

    def attach(self, rank: int | None = None, name: str = "", session_id: int | None = None,
               on_shared: Callable[[Shared], None] | None = None, following: bool = False) -> AttachedSession:
        """Attach to one session, by id or by rank (and name); `on_shared` gets what others do
        there. `following`: this client let the rank run and comes back to its next stop, so
        the replay is that stop as pdb printed it (see pb.AttachTarget.following)."""
        if session_id is not None:
            target = pb.AttachTarget(session_id=session_id, following=following)
        else:
            target = pb.AttachTarget(rank=pb.RankTarget(rank=rank or 0, name=name), following=following)
        server = self._beside
        if server is not None:
            return AttachedSession(lambda take: _AttachInPlace(server, target, take), on_shared)
        return AttachedSession(lambda take: _AttachStream(self, target, take), on_shared)

    async def watch(self, exits: bool = False) -> AsyncGenerator[Change, None]:
        """(kind, session, reason): OPENED for each live session, one SYNCED (with an empty
        session), then every opened/updated/closed session; `reason` only with CLOSED. With
        `exits`, also (JOINED, worker, None) / (EXITED, worker, None) for every worker
        process that connects / ends."""
        call = self.stub.Watch(pb.WatchRequest(exits=exits), metadata=self.connection.metadata())
        try:
            with self.translating():
                async for event in call:
                    yield change_of(event)
        finally:
            call.cancel()


@contextlib.contextmanager
def translating(addr: str) -> Iterator[None]:
    """Turn grpc errors into MeshdbgError at the API boundary."""
    try:
        yield
    except grpc.RpcError as exc:
        raise error_from_rpc(exc, addr) from exc
