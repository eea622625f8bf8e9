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
from typing import TYPE_CHECKING, AsyncGenerator, AsyncIterator, Callable, Iterator, Protocol, Sequence

import grpc

from meshdbg.debugger.views import Change, HostView, Sessions, SessionView, Waited, WorkerView, change_of
from meshdbg.wire.chunks import check_line
from meshdbg.wire.connection import ConnectionInfo, resolve_connection
from meshdbg.wire.environment import RECONNECT_S
from meshdbg.wire.handshake import handshake
from meshdbg.wire.keepalive import CLIENT_KEEPALIVE
from meshdbg.wire.tls import channel_credentials
from meshdbg.debugger.deadlines import cut_off_text
from meshdbg.debugger.loop_stalls import LoopStalls
from meshdbg.debugger.sanitize import printable
from meshdbg.wire.errors import ConnectionFailed, MeshdbgError, ServerStalled, SessionError
from meshdbg.wire.status import error_from_rpc
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from meshdbg.wire.text import wire_text
from meshdbg.wire.waking import server_waking
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from meshdbg.debugger.answers import CastResult, CompareView, RankStacksView, Shared
    from meshdbg.debugger.attached_session import AttachedHere, AttachedSession
    from meshdbg.debugger.pipeline_view import PipelineRankView

CONNECT_TIMEOUT_S = 3.0
# Listings of any length; a hung server is noticed in ~4 s (meshdbg.wire.keepalive).
CHANNEL_OPTIONS = [("grpc.max_receive_message_length", -1), *CLIENT_KEEPALIVE]


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
        self._stalls = LoopStalls()  # this client's own stalls, while a stream of output is open

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

    async def handshake(self, wait_for_ready: bool = False) -> None:
        """Check the server answers and speaks our protocol (a MeshdbgError says why not);
        `wait_for_ready`: within CONNECT_TIMEOUT_S, while the channel connects again."""
        await handshake(self.channel, self.connection, CONNECT_TIMEOUT_S, wait_for_ready)

    @contextlib.asynccontextmanager
    async def cut_off_when_left_behind(self) -> AsyncIterator[None]:
        """`translating`, for a stream of output: when it breaks but the server still answers,
        either the server cut this client off for falling behind (it was stopped, or its
        terminal froze: its loop stalled) and SessionError says so, or the server did not
        answer for a while and is back (ServerStalled), instead of "no server reachable"."""
        with self._stalls.watching() as began:
            try:
                with self.translating():
                    yield
            except ConnectionFailed as lost:
                # The stream's connection may have been reset (a stopped client's, by the
                # server's keepalive): the channel then connects again, and a probe failing
                # fast meanwhile would call a live server gone.
                if not await self.answers(wait_for_ready=True) and not await self._answers_once_awake():
                    raise self.went_away() from lost  # the server is gone
                if self._stalls.stalled_since(began):
                    raise SessionError(cut_off_text()) from lost
                raise ServerStalled(f"the server at {self.connection.addr} did not answer for a while (stopped, or its "
                                    f"machine loaded) and the stream broke; it answers again") from lost

    async def _answers_once_awake(self) -> bool:
        """Whether a server that did not answer within CONNECT_TIMEOUT_S of a stream of it
        breaking answers within the reconnect window, waited for while it shows itself stopped
        or starved (meshdbg.wire.waking), as a paused worker waits for it. (A server stopped
        for 7 s was told "went away", and `attach --plain` left the rank it was driving.)"""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RECONNECT_S.get()
        while loop.time() < deadline and await self._waking():
            if await self.answers(wait_for_ready=True):
                return True
        return False

    async def _waking(self) -> bool:
        """The server's port shows it stopped or starved (meshdbg.wire.waking), asked off the loop."""
        return await asyncio.to_thread(server_waking, self.connection.addr)

    async def answers(self, wait_for_ready: bool = False) -> bool:
        """Whether the server answers now, asked after a stream of it broke: only this
        client's connection may have gone (`handshake`'s `wait_for_ready`)."""
        try:
            await self.handshake(wait_for_ready)
        except MeshdbgError:
            return False
        return True

    async def silence(self) -> MeshdbgError:
        """What a server that does not answer now is: stopped or starved, its port shows
        (ServerStalled: to be waited for), else gone (`went_away`). (A console whose server
        stalled for a few seconds said it "went away".)"""
        if await self._waking():
            return ServerStalled(f"the server at {self.connection.addr} does not answer (stopped, or its machine "
                                 f"loaded)")
        return self.went_away()

    def went_away(self) -> ConnectionFailed:
        """The error of a stream the server ended by going away (killed, or its machine lost),
        in place of gRPC's "no meshdbg server reachable ... (Stream removed (Socket closed))"."""
        return ConnectionFailed(f"the server at {self.connection.addr} went away")

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
        from meshdbg.debugger.answers import CastResult  # (a listing makes none of the answers' classes)

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
                    results.append(CastResult(SessionView.from_pb(r.session), output, r.error, r.ended, r.no_answer,
                                              r.session.prompt))
        return sorted(results, key=lambda r: (r.session.rank, r.session.name, r.session.thread_id, r.session.id))

    async def stacks(self, selection: str = "", all_threads: bool = False, timeout_s: float = 0
                     ) -> builtins.list[RankStacksView]:
        """The Python stacks of the selected (default: all) ranks, running, stopped or stuck; by rank.

        Each says where it came from (the rank's agent, a pdb session, or py-spy from outside);
        a rank that answered neither way has source NONE and an `error`. Bounded: each rank
        is asked from inside for `timeout_s` (0: the server's default), then from outside.
        """
        from meshdbg.debugger.answers import RankStacksView

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
        from meshdbg.debugger.answers import CompareView

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
        `clear_breakpoints`. The sessions resumed, (in `no_answer`) the ranks that had not
        answered within `timeout_s` (0: the server's default), and (in `not_resumed`) those
        left paused, with why (not answering already, busy with a command)."""
        with self.translating():
            reply = await self.stub.Continue(pb.ContinueRequest(selection=selection, clear_breakpoints=clear_breakpoints,
                                                                timeout_s=timeout_s), metadata=self.connection.metadata())
        return Waited((SessionView.from_pb(info) for info in reply.resumed),
                      (info.identity.rank for info in reply.no_answer),
                      ((left.session.identity.rank, printable(left.why)) for left in reply.not_resumed))

    def attach(self, rank: int | None = None, name: str = "", session_id: int | None = None,
               on_shared: Callable[[Shared], None] | None = None, following: bool = False,
               program_shown: bool = False) -> AttachedSession:
        """Attach to one session, by id or by rank (and name); `on_shared` gets what others do
        there. `following`: this client let the rank run and comes back to its next stop, so
        the replay is that stop as pdb printed it (see pb.AttachTarget.following).
        `program_shown`: this client showed the rank's output as it came, so the replay leaves
        out what the program printed since pdb's last output (pb.AttachTarget.program_shown)."""
        if session_id is not None:
            target = pb.AttachTarget(session_id=session_id, following=following, program_shown=program_shown)
        else:
            target = pb.AttachTarget(rank=pb.RankTarget(rank=rank or 0, name=name), following=following,
                                     program_shown=program_shown)
        from meshdbg.debugger.attached_session import AttachedSession  # (a listing loads no attach)

        if self._beside is not None:
            return AttachedSession.in_place(self._beside, target, on_shared)
        return AttachedSession.over_stream(self, target, on_shared)

    async def watch(self, exits: bool = False) -> AsyncGenerator[Change, None]:
        """(kind, session, reason): OPENED for each live session, one SYNCED (with an empty
        session), then every opened/updated/closed session; `reason` only with CLOSED. With
        `exits`, also (JOINED, worker, None) / (EXITED, worker, None) for every worker
        process that connects / ends."""
        call = self.stub.Watch(pb.WatchRequest(exits=exits), metadata=self.connection.metadata())
        streaming = False
        try:
            with self.translating():
                async for event in call:
                    streaming = True
                    yield change_of(event)
        except ConnectionFailed as exc:
            if not streaming:
                raise
            raise self.went_away() from exc
        finally:
            call.cancel()


@contextlib.contextmanager
def translating(addr: str) -> Iterator[None]:
    """Turn grpc errors into MeshdbgError at the API boundary."""
    try:
        yield
    except grpc.RpcError as exc:
        raise error_from_rpc(exc, addr) from exc
