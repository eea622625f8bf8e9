"""The gRPC face of the session registry: methods named as in protos/meshdbg.wire.proto.

Each method moves messages between the wire and `SessionRegistry`/`Session`, and turns
meshdbg errors into gRPC status codes. The logic lives in meshdbg.debugger.sessions and .registry.
"""

from __future__ import annotations

import asyncio
import types
from typing import Any, AsyncIterator, Callable, Generator, NoReturn, TypeVar

from google.protobuf.message import Message

import grpc

from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.chunks import check_line
from meshdbg.wire.coords import format_coords
from meshdbg.wire.errors import MeshdbgError, SessionError
from meshdbg.wire.logs import logger
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.debugger.auth import Requests, reads_requests
from meshdbg.debugger.deadlines import (CAST_S, CLIENT_STALL_S, COMPARE_S, CONTINUE_S, INTERRUPT_S, STACKS_S, NoAnswer,
                                         answer_within, cut_off_text, deadline)
from meshdbg.debugger.attached_client import AttachedClient
from meshdbg.debugger.casting import cast
from meshdbg.debugger.evaluation import ask, evaluate_all
from meshdbg.debugger.sampling import collect_stacks
from meshdbg.debugger.liveness import gone_reason, keep_while_alive
from meshdbg.debugger.pipeline_query import ask_pipeline
from meshdbg.debugger.sanitize import sanitize_identity
from meshdbg.debugger.selection import ALL, parse_selection
# Session is also the name of the worker's RPC below, which hides it inside the servicer class.
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.debugger.sessions import Session as RankSession
from meshdbg.debugger.workers import WorkerRegistry
from meshdbg.wire.status import status_code_of
from meshdbg.wire.vocabulary import EndReason, State

log = logger(__name__)
SERVER_VERSION = "0.1.0"
HELLO_TIMEOUT_S = 10.0  # a stream that says nothing for this long is closed
HELLO_LIMIT = 64 * 1024  # bytes: identities stay small, so listings of thousands stay fast
SESSION_STREAM = "a session"  # a worker's session stream, in errors and the log
# Session streams kept open for their processes' next stops, at most (~24 KiB of the server's
# memory each); past it, a stream whose session ends is closed, as if its worker had not asked.
PARKED_LIMIT = 1024
_M = TypeVar("_M", bound=Message)  # the message type of a stream

async def _abort(context: grpc.aio.ServicerContext, exc: MeshdbgError) -> None:
    await context.abort(status_code_of(exc), str(exc))


def version_problem(version: int) -> str | None:
    if version != PROTOCOL_VERSION:
        return f"protocol version {version} is not supported by this server (it speaks {PROTOCOL_VERSION})"
    return None


async def opening_hello(request_iterator: AsyncIterator[Any], context: grpc.aio.ServicerContext, stream: str,
                        identity_of: Callable[[Any], pb.Identity] = lambda hello: hello) -> Any:
    """The `hello` a worker's stream (named `stream` in errors) must open with, its identity
    made printable (meshdbg.debugger.sanitize). Typed Any: each stream's `hello` is a message
    of its own (pb.Identity, an agent's hello), which the caller names.

    Aborts the RPC with DEADLINE_EXCEEDED when nothing comes within HELLO_TIMEOUT_S, else as
    `checked_hello` does.
    """
    return await checked_hello(await first_message(request_iterator, context, stream), context, stream, identity_of)


async def checked_hello(first: Any, context: grpc.aio.ServicerContext, stream: str,
                        identity_of: Callable[[Any], pb.Identity] = lambda hello: hello) -> Any:
    """The `hello` of `first`, a stream's message that must be one (see `opening_hello`).

    Aborts the RPC with INVALID_ARGUMENT when `first` is something else (or None: the stream
    closed) or larger than HELLO_LIMIT, and with FAILED_PRECONDITION when the hello's identity
    speaks another protocol version.
    """
    if first is None or not first.HasField("hello"):
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, f"{stream} must open with hello", stream)
    size = first.ByteSize()
    if size > HELLO_LIMIT:
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, f"the hello of {stream} is {size:,} bytes, over the "
                     f"limit of {HELLO_LIMIT:,}: shorten MESHDBG_NAME or the context labels", stream)
    identity = identity_of(first.hello)
    problem = version_problem(identity.protocol_version)
    if problem:
        await refuse(context, grpc.StatusCode.FAILED_PRECONDITION, problem,
                     f"{stream} of rank {identity.rank} pid {identity.pid}")
    sanitize_identity(identity)
    return first.hello


async def first_message(request_iterator: AsyncIterator[_M], context: grpc.aio.ServicerContext, stream: str
                        ) -> _M | None:
    """The first message of a stream (None if it closes first); closes the stream with
    DEADLINE_EXCEEDED when the peer says nothing within HELLO_TIMEOUT_S."""
    try:
        return await asyncio.wait_for(anext(aiter(request_iterator), None), HELLO_TIMEOUT_S)
    except TimeoutError:
        await refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, f"{stream} sent nothing in {HELLO_TIMEOUT_S:g} s; closed",
                     stream)


async def refuse(context: grpc.aio.ServicerContext, code: grpc.StatusCode, why: str, who: str) -> NoReturn:
    """End the call with `code` and `why`, recording in the log `who` was refused, from where, and why."""
    log.warning("refused %s from %s: %s", who, context.peer(), why)
    await context.abort(code, why)


@types.coroutine
def _next_turn() -> Generator[None, None, None]:
    """Let every task ready now run first: `asyncio.sleep(0)` in one frame, not two (a
    session stream takes a turn after each prompt, on every command's path)."""
    yield


class StreamWriter:
    """`context.write` for several writers at once, one at a time in order; SessionError(`gone`)
    once the peer left. A worker's session stream waits for days holding this, so it is slotted
    and holds no lock: a write that finds another under way waits for that one's end, on a
    future made only then (most writes find none: a command's input, then its worker's reply)."""

    __slots__ = ("_context", "_gone", "_busy", "_written")

    def __init__(self, context: grpc.aio.ServicerContext, gone: str) -> None:
        self._context = context
        self._gone = gone
        self._busy = False  # a write is under way
        self._written: asyncio.Future[None] | None = None  # set when it ends, made by the first write waiting for it

    async def __call__(self, message: Message) -> None:
        while self._busy:
            if self._written is None:
                self._written = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._written)  # shielded: a waiter cancelled cancels not the others' future
        self._busy = True
        try:
            if self._context.done():
                raise SessionError(self._gone)
            await self._context.write(message)
        finally:
            self._busy = False
            written, self._written = self._written, None
            if written is not None:
                written.set_result(None)


class ClientWriter:
    """A control client's stream, written by several sessions at once, that never holds a rank.

    A client that takes nothing for CLIENT_STALL_S (SIGSTOPped, a frozen terminal, a dead
    host) while a session streams output to it is cut: the write fails with SessionError, the
    session's output goes on into its transcript (replayed to whoever attaches next), and `cut`
    says why, for the status the client reads if it comes back. What waits for the client is
    bounded by the transport's flow-control window, never by the size of the output.

    One watchdog timer serves every write, not a timer each: a write only notes when it began,
    and the timer, when due, cuts the write under way if it began CLIENT_STALL_S ago, or is set
    again for when it would be (armed by the first write after an idle spell). A `p x` then
    makes and cancels no timer (issue 22: a timer per write cost the attached `p` 2-3 %).
    """

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self._context = context
        self._lock = asyncio.Lock()
        self._writing: asyncio.Task[Any] | None = None  # the task whose write is under way
        self._began = 0.0  # when that write began (the loop's clock)
        self._watchdog: asyncio.TimerHandle | None = None
        self.cut = ""

    async def __call__(self, message: Message) -> None:
        async with self._lock:
            if self.cut or self._context.done():
                raise SessionError(self.cut or "the client went away")
            writing = self._writing = asyncio.current_task()
            assert writing is not None  # a write is awaited, so in a task
            cancelling = writing.cancelling()
            loop = asyncio.get_running_loop()
            self._began = loop.time()
            if self._watchdog is None:
                self._watchdog = loop.call_at(self._began + CLIENT_STALL_S, self._watch)
            try:
                await self._context.write(message)
            except asyncio.CancelledError:
                if self.cut and writing.uncancel() <= cancelling:  # cut by the watchdog, not cancelled from outside
                    raise SessionError(self.cut) from None
                raise
            except Exception as exc:  # the call is over (gRPC's ExecuteBatchError): never the session's failure
                raise SessionError("the client went away") from exc
            finally:
                self._writing = None

    def _watch(self) -> None:
        """The watchdog is due: cut a write stalled for CLIENT_STALL_S, else wait for when the
        write under way would be (none under way: the next write arms it again)."""
        self._watchdog = None
        writing = self._writing
        if writing is None:
            return
        loop = asyncio.get_running_loop()
        due = self._began + CLIENT_STALL_S
        if loop.time() < due:
            self._watchdog = loop.call_at(due, self._watch)
            return
        self.cut = cut_off_text()
        writing.cancel()

    async def end(self) -> None:
        """End the call with the reason it was cut, if it was (a client that was not cut is
        simply done)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self.cut:
            await self._context.abort(grpc.StatusCode.ABORTED, self.cut)


class DebuggerServicer(pb_grpc.DebuggerServicer):
    """Serves worker sessions and the control API over one session registry (and the workers)."""

    def __init__(self, registry: SessionRegistry, workers: WorkerRegistry | None = None) -> None:
        self.registry = registry
        self.workers = workers or WorkerRegistry(registry)

    # ---- worker side ------------------------------------------------------------------

    @reads_requests
    async def Session(self, request_iterator: AsyncIterator[pb.WorkerMessage], context: grpc.aio.ServicerContext
                      ) -> None:
        # While its worker sits stopped, this frame is all a session's stream holds in Python: no
        # generator (its requests are read off the context), no message (each is let go once taken).
        #
        # A stream carries one session after another: a worker that ends a session with `park`
        # keeps the stream for its process's next stop, which opens with a new hello on it (no
        # stream to set up and tear down per stop, on either side: issue 22's `continue`).
        requests = Requests(context)
        write = StreamWriter(context, EndReason.WORKER_GONE)
        session: RankSession | None = await self._opened(
            await opening_hello(requests, context, SESSION_STREAM), context, write)
        while session is not None and await self._serve(session, requests, write):
            first = await self._parked_until_next_stop(session.identity, requests, write)
            session = None if first is None else await self._opened(
                await checked_hello(first, context, SESSION_STREAM), context, write)

    async def _parked_until_next_stop(self, identity: pb.Identity, requests: Requests, write: StreamWriter
                         ) -> pb.WorkerMessage | None:
        """The first message of the next stop of the process of `identity` on its parked stream,
        as long as it takes; None once the stream ends. A process with no agent stream is known
        meanwhile by its parked streams, whose end tells its exit (meshdbg.debugger.hook_processes)."""
        hooked = not self.workers.registered(identity)
        if hooked:
            self.workers.hooked.hold(identity)
        self.registry.parked.add(write)
        first: pb.WorkerMessage | None = None
        try:
            first = await anext(requests, None)
            return first
        finally:
            self.registry.parked.discard(write)
            if hooked:
                self.workers.hook_stream_left(identity, stopped=first is not None)

    async def _serve(self, session: RankSession, requests: Requests, write: StreamWriter) -> bool:
        """Carry `session` until it ends; whether its worker parked the stream for its next stop."""
        output, reason, park = "", EndReason.WORKER_GONE, False
        try:
            await write(pb.ServerMessage(welcome=pb.Welcome(session_id=session.id)))
            async for message in requests:
                kind = message.WhichOneof("kind")  # (read once: the dispatch is on every `p x`'s path)
                if kind == "prompt":
                    session.on_prompt(message.prompt)
                elif kind == "output":
                    await session.on_output(message.output.text)
                elif kind == "ended":
                    output, reason, park = message.ended.output, EndReason.of(message.ended.reason), message.ended.park
                    break
                elif kind == "answer":
                    session.on_answer(message.answer)
                elif kind == "interrupted":
                    session.on_interrupted(message.interrupted)
                del message  # a parsed message is an arena of 0.5 KiB or more: not kept while the worker waits
                if kind == "prompt":
                    # The command this prompt answers resumes before the stream reads on: gRPC
                    # holds the next message until then, and the read it arms is off the round
                    # trip (issue 22: 8 us of a `p x` inside `meshdbg run`).
                    await _next_turn()
        finally:
            if session.writer is write:  # else the stop was re-registered on a newer stream
                self._stream_ended(session, output, reason)
        parked = park and not self.registry.closing and len(self.registry.parked) < PARKED_LIMIT
        if not parked and reason.rank_runs_on and not self.workers.registered(session.identity):
            self.workers.hook_runs_unparked(session.identity)
        return parked

    async def _opened(self, hello: pb.Identity, context: grpc.aio.ServicerContext, write: StreamWriter) -> RankSession:
        """The session a worker's stream opens with its hello (a new one, or the one it re-registers)."""
        resumes = hello.resumes_session
        session = self.registry.open(hello, write)
        log.info("session %d%s: rank %d (%s) pid %d thread %r on %s, from %s", session.id,
                 " re-registered" if session.id == resumes else "", hello.rank, format_coords(session.coords),
                 hello.pid, hello.thread_name, hello.hostname, context.peer())
        return session

    def _stream_ended(self, session: RankSession, output: str, reason: EndReason) -> None:
        """A session's stream is over: an end the worker said, its death, or a silence that the
        worker may end by re-registering (kept "not answering" meanwhile)."""
        if reason is EndReason.WORKER_GONE:
            gone = gone_reason(session.identity)
            if gone.alive and self.registry.closing:  # it took our goodbye and runs on
                reason = EndReason.SERVER_STOPPED
            elif gone.alive and self.registry.stopped_again(session):
                reason = EndReason.STOPPED_AGAIN
            elif gone.alive:
                keep_while_alive(session, gone)
                return
            else:
                session.gone = gone.text
        session.on_end(output, reason)

    # ---- control side -----------------------------------------------------------------

    async def Handshake(self, request: pb.HandshakeRequest, context: grpc.aio.ServicerContext) -> pb.HandshakeReply:
        problem = version_problem(request.protocol_version)
        if problem:
            await refuse(context, grpc.StatusCode.FAILED_PRECONDITION, problem, "a control client")
        log.debug("control client from %s", context.peer())
        return pb.HandshakeReply(protocol_version=PROTOCOL_VERSION, server_version=SERVER_VERSION)

    async def List(self, request: pb.ListRequest, context: grpc.aio.ServicerContext) -> bytes:
        """The ListReply, serialized: the registry keeps its sessions' part serialized
        (meshdbg.debugger.auth lets a handler answer with bytes)."""
        workers = self.workers.infos() if request.all else []
        return pb.ListReply(workers=workers).SerializeToString() + self.registry.listed_bytes()

    async def Interrupt(self, request: pb.InterruptRequest, context: grpc.aio.ServicerContext) -> pb.InterruptReply:
        """Break into the selected sessions that run a command; stop the selected running ranks."""
        try:
            if request.session_id:
                sessions, ranks = [self.registry.get(request.session_id)], []
            else:
                selection = parse_selection(request.selection) if request.selection else ALL
                sessions = [s for s in self.registry.sessions() if selection.matches(s.rank, s.coords)]
                ranks = self.workers.interrupt(selection)
            busy = [s for s in sessions if s.running_command]
            if request.session_id and not busy:
                raise SessionError(f"rank {sessions[0].rank} is not running a command")
        except MeshdbgError as exc:
            await _abort(context, exc)
        seconds = deadline(request.timeout_s, INTERRUPT_S)
        frames = await asyncio.gather(*(answer_within(s.interrupt(), seconds) for s in busy), return_exceptions=True)
        broken: list[pb.SessionInfo] = []
        silent: list[pb.SessionInfo] = []
        for session, frame in zip(busy, frames):
            info = session.info()
            if isinstance(frame, pb.Frame):
                info.frame.CopyFrom(frame)
            (silent if isinstance(frame, NoAnswer) else broken).append(info)
        return pb.InterruptReply(ranks=sorted(set(ranks) | {s.rank for s in busy}), sessions=broken, no_answer=silent)

    async def Stacks(self, request: pb.StacksRequest, context: grpc.aio.ServicerContext) -> pb.StacksReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            ranks = await collect_stacks(self.workers, selection, request.all_threads,
                                         deadline(request.timeout_s, STACKS_S))
        except MeshdbgError as exc:
            await _abort(context, exc)
        return pb.StacksReply(ranks=ranks)

    async def Pipeline(self, request: pb.PipelineQuery, context: grpc.aio.ServicerContext) -> pb.PipelineReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            ranks = await ask_pipeline(self.workers, selection, request)
        except MeshdbgError as exc:
            await _abort(context, exc)
        return pb.PipelineReply(ranks=ranks)

    async def Compare(self, request: pb.CompareRequest, context: grpc.aio.ServicerContext) -> pb.CompareReply:
        try:
            sessions = self.registry.select(parse_selection(request.selection))
        except MeshdbgError as exc:
            await _abort(context, exc)
        return pb.CompareReply(results=await evaluate_all(sessions, request.expression,
                                                          deadline(request.timeout_s, COMPARE_S)))

    async def Query(self, request: pb.QuerySessionRequest, context: grpc.aio.ServicerContext) -> pb.QueryAnswer:
        """Forward one question to one stopped session and return its pdb's answer."""
        try:
            answer = await ask(self.registry.get(request.session_id), request.query, request.timeout_s)
        except MeshdbgError as exc:
            await _abort(context, exc)
        return answer

    async def Cast(self, request: pb.CastRequest, context: grpc.aio.ServicerContext) -> None:
        try:
            check_line(request.command)
            sessions = self.registry.select(parse_selection(request.selection))
        except MeshdbgError as exc:
            await _abort(context, exc)
        write = ClientWriter(context)
        await cast(sessions, request.command, write, deadline(request.timeout_s, CAST_S), request.batched)
        await write.end()

    async def Continue(self, request: pb.ContinueRequest, context: grpc.aio.ServicerContext) -> pb.ContinueReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            sessions = self.registry.select(selection)
        except MeshdbgError as exc:
            await _abort(context, exc)
        seconds = deadline(request.timeout_s, CONTINUE_S)
        # One silent already is not asked, but named with why: it stays paused where it is
        # once it answers again (it was named nowhere, and `continue` exited 0).
        not_resumed = [pb.NotResumed(session=s.info(), why=s.silent_why) for s in sessions
                       if s.state is State.NOT_ANSWERING]
        asked = [s for s in sessions if s.state is not State.NOT_ANSWERING]
        outcomes = await asyncio.gather(*(answer_within(s.resume(request.clear_breakpoints), seconds) for s in asked),
                                        return_exceptions=True)
        reply = pb.ContinueReply(not_resumed=not_resumed)
        for s, outcome in zip(asked, outcomes):
            if not isinstance(outcome, BaseException):
                reply.resumed.append(s.info())
            elif isinstance(outcome, NoAnswer) or (isinstance(outcome, SessionError) and s.state is State.NOT_ANSWERING):
                # No answer in time, or the rank stopped answering once asked (SIGSTOP): the
                # resume was sent and takes effect if it reaches the rank, as a cast's command
                # runs on. (Those that went silent were named nowhere, and the rank then ran.)
                reply.no_answer.append(s.info())
            elif isinstance(outcome, SessionError) and s.state in (State.RUNNING, State.STOPPED):
                # Busy with a command (another client's): it stays paused, and is named (it was
                # not: "resumed 1 session (rank 0)", status 0). A stop still opening is waited
                # for (`Session.resume`); one that ended meanwhile (continued by another client)
                # is no longer there to name.
                reply.not_resumed.add(session=s.info(), why=str(outcome))
        return reply

    @reads_requests
    async def Attach(self, request_iterator: AsyncIterator[pb.AttachRequest], context: grpc.aio.ServicerContext
                     ) -> None:
        # Its requests are read off the context (`Requests`): no request iterator or decoding
        # generator stepped between each line and its command (issue 22).
        requests = Requests(context)
        first = await first_message(requests, context, "an attach stream")
        if first is None or not first.HasField("target"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "attach must open with a target")
        try:
            client = AttachedClient(self.registry, first.target)
        except MeshdbgError as exc:
            await _abort(context, exc)
        write = ClientWriter(context)
        try:
            for event in client.opening():
                await write(event)
            async with client.sharing(write):
                async for request in requests:
                    if await client.answer(request, write):
                        break
        except SessionError:
            pass  # the client went away or was cut off: the session is untouched
        finally:
            client.close()
        await write.end()

    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.WatchEvent]:
        async for event in self.registry.watch(exits=request.exits):
            yield event
