"""The gRPC face of the session registry: methods named as in protos/meshdbg.wire.proto.

Each method moves messages between the wire and `SessionRegistry`/`Session`, and turns
meshdbg errors into gRPC status codes. The logic lives in meshdbg.debugger.sessions.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Awaitable, Callable

from google.protobuf.message import Message

import grpc

from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.chunks import check_line
from meshdbg.wire.errors import MeshdbgError, SessionError, UsageError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.debugger.evaluation import evaluate_all
from meshdbg.debugger.sampling import collect_stacks
from meshdbg.debugger.liveness import gone_reason
from meshdbg.debugger.pipeline_query import ask_pipeline
from meshdbg.debugger.sanitize import sanitize_identity
from meshdbg.debugger.selection import ALL, parse_selection
from meshdbg.debugger.sessions import Session, SessionRegistry
from meshdbg.debugger.workers import WorkerRegistry
from meshdbg.wire.status import status_code_of
from meshdbg.wire.vocabulary import EndReason, State, wire_value

SERVER_VERSION = "0.1.0"
HELLO_TIMEOUT_S = 10.0  # a stream that says nothing for this long is closed
HELLO_LIMIT = 64 * 1024  # bytes: identities stay small, so listings of thousands stay fast

async def _abort(context: grpc.aio.ServicerContext, exc: MeshdbgError) -> None:
    await context.abort(status_code_of(exc), str(exc))


def version_problem(version: int) -> str | None:
    if version != PROTOCOL_VERSION:
        return f"protocol version {version} is not supported by this server (it speaks {PROTOCOL_VERSION})"
    return None


async def opening_hello(request_iterator: AsyncIterator[Message], context: grpc.aio.ServicerContext, stream: str,
                        identity_of: Callable[[Message], pb.Identity] = lambda hello: hello) -> Message:
    """The `hello` a worker's stream (named `stream` in errors) must open with, its identity
    made printable (meshdbg.debugger.sanitize).

    Aborts the RPC with DEADLINE_EXCEEDED when nothing comes within HELLO_TIMEOUT_S, with
    INVALID_ARGUMENT when the first message is something else or larger than HELLO_LIMIT, and
    with FAILED_PRECONDITION when the hello's identity speaks another protocol version.
    """
    first = await first_message(request_iterator, context, stream)
    if first is None or not first.HasField("hello"):
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{stream} must open with hello")
    size = first.ByteSize()
    if size > HELLO_LIMIT:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the hello of {stream} is {size:,} bytes, over the "
                            f"limit of {HELLO_LIMIT:,}: shorten MESHDBG_NAME or the context labels")
    identity = identity_of(first.hello)
    problem = version_problem(identity.protocol_version)
    if problem:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
    sanitize_identity(identity)
    return first.hello


async def first_message(request_iterator: AsyncIterator[Message], context: grpc.aio.ServicerContext, stream: str
                        ) -> Message | None:
    """The first message of a stream (None if it closes first); closes the stream with
    DEADLINE_EXCEEDED when the peer says nothing within HELLO_TIMEOUT_S."""
    try:
        return await asyncio.wait_for(anext(aiter(request_iterator), None), HELLO_TIMEOUT_S)
    except TimeoutError:
        await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                            f"{stream} sent nothing in {HELLO_TIMEOUT_S:g} s; closed")


def serialized_writer(context: grpc.aio.ServicerContext, gone: str) -> Callable[[Message], Awaitable[None]]:
    """`context.write` for several writers at once; SessionError(`gone`) once the peer left."""
    lock = asyncio.Lock()

    async def write(message: Message) -> None:
        async with lock:
            if context.done():
                raise SessionError(gone)
            await context.write(message)

    return write


class DebuggerServicer(pb_grpc.DebuggerServicer):
    """Serves worker sessions and the control API over one session registry (and the workers)."""

    def __init__(self, registry: SessionRegistry, workers: WorkerRegistry | None = None) -> None:
        self.registry = registry
        self.workers = workers or WorkerRegistry(registry)

    # ---- worker side ------------------------------------------------------------------

    async def Session(self, request_iterator: AsyncIterator[pb.WorkerMessage], context: grpc.aio.ServicerContext
                      ) -> None:
        hello = await opening_hello(request_iterator, context, "a session")
        session = self.registry.open(hello, serialized_writer(context, EndReason.WORKER_GONE))
        output, reason = "", EndReason.WORKER_GONE
        try:
            await context.write(pb.ServerMessage(welcome=pb.Welcome(session_id=session.id)))
            async for message in request_iterator:
                kind = message.WhichOneof("kind")
                if kind == "output":
                    await session.on_output(message.output.text)
                elif kind == "prompt":
                    session.on_prompt(message.prompt)
                elif kind == "completions":
                    session.on_completions(message.completions)
                elif kind == "stacks":
                    session.on_stacks(message.stacks)
                elif kind == "evaluation":
                    session.on_evaluation(message.evaluation)
                elif kind == "interrupted":
                    session.on_interrupted(message.interrupted)
                elif kind == "ended":
                    output, reason = message.ended.output, EndReason.of(message.ended.reason)
                    break
        finally:
            if reason is EndReason.WORKER_GONE:
                gone = gone_reason(hello)
                session.gone = gone.text
                if gone.alive:  # hung or cut off: say so where its output would be (an exit says nothing)
                    output = f"*** {gone.text}\n"
            session.on_end(output, reason)

    # ---- control side -----------------------------------------------------------------

    async def Handshake(self, request: pb.HandshakeRequest, context: grpc.aio.ServicerContext) -> pb.HandshakeReply:
        problem = version_problem(request.protocol_version)
        if problem:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        return pb.HandshakeReply(protocol_version=PROTOCOL_VERSION, server_version=SERVER_VERSION)

    async def List(self, request: pb.ListRequest, context: grpc.aio.ServicerContext) -> pb.ListReply:
        workers = [self.workers.info(w) for w in self.workers.workers()] if request.all else []
        listing = pb.ListReply(workers=workers)
        for session in self.registry.sessions():  # from cached bytes: 10,000 sessions in ~10 ms
            listing.sessions.add().MergeFromString(session.info_bytes())
        return listing

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
        frames = await asyncio.gather(*(s.interrupt() for s in busy), return_exceptions=True)
        broken = []
        for session, frame in zip(busy, frames):
            info = session.info()
            if isinstance(frame, pb.Frame):
                info.frame.CopyFrom(frame)
            broken.append(info)
        return pb.InterruptReply(ranks=sorted(set(ranks) | {s.rank for s in busy}), sessions=broken)

    async def Stacks(self, request: pb.StacksRequest, context: grpc.aio.ServicerContext) -> pb.StacksReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            ranks = await collect_stacks(self.workers, selection, request.all_threads)
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
        return pb.CompareReply(results=await evaluate_all(sessions, request.expression, request.timeout_s))

    async def Cast(self, request: pb.CastRequest, context: grpc.aio.ServicerContext) -> None:
        try:
            check_line(request.command)
            sessions = self.registry.select(parse_selection(request.selection))
        except MeshdbgError as exc:
            await _abort(context, exc)
        write = serialized_writer(context, "the client went away")
        outcomes = await asyncio.gather(*(self._cast_one(session, request.command, write) for session in sessions),
                                        return_exceptions=True)
        failure = next((o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, SessionError)), None)
        if failure is not None:  # a bug, not a client that left
            raise failure

    @staticmethod
    async def _cast_one(session: Session, command: str, write: Callable[[pb.CastEvent], Awaitable[None]]) -> None:
        """Run `command` on one session, streaming its output chunks, then its result."""
        async def forward(text: str) -> None:
            await write(pb.CastEvent(session_id=session.id, output=pb.OutputChunk(text=text)))

        try:
            reply = await session.execute(command, forward)
            error = session.gone  # it died or hung mid-command: a failure, not an empty success
        except SessionError as exc:
            reply, error = pb.Reply(), str(exc)
        result = pb.CastResult(session=session.info(), output="" if error else reply.output, error=error,
                               ended=reply.ended)
        await write(pb.CastEvent(session_id=session.id, result=result))

    async def Continue(self, request: pb.ContinueRequest, context: grpc.aio.ServicerContext) -> pb.ContinueReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            sessions = self.registry.select(selection)
        except MeshdbgError as exc:
            await _abort(context, exc)
        outcomes = await asyncio.gather(*(s.resume(request.clear_breakpoints) for s in sessions), return_exceptions=True)
        resumed = [s.info() for s, outcome in zip(sessions, outcomes) if not isinstance(outcome, BaseException)]
        return pb.ContinueReply(resumed=resumed)

    async def Attach(self, request_iterator: AsyncIterator[pb.AttachRequest], context: grpc.aio.ServicerContext
                     ) -> None:
        first = await first_message(request_iterator, context, "an attach stream")
        if first is None or not first.HasField("target"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "attach must open with a target")
        try:
            session = self._resolve(first.target)
        except MeshdbgError as exc:
            await _abort(context, exc)
        write = serialized_writer(context, "the client went away")
        await write(pb.AttachEvent(attached=session.info()))
        await write(pb.AttachEvent(reply=session.replay()))
        watcher = asyncio.create_task(self._announce_end(session, write))
        try:
            async for request in request_iterator:
                kind = request.WhichOneof("kind")
                if kind == "input":
                    reply = await self._attached_command(session, request.input, write)
                    await write(pb.AttachEvent(reply=reply))
                    if reply.ended:
                        break
                elif kind == "complete":
                    c = request.complete
                    matches = await session.complete(c.text, c.line, c.begidx, c.endidx)
                    await write(pb.AttachEvent(completions=pb.Completions(request_id=c.request_id, matches=matches)))
        finally:
            watcher.cancel()

    def _resolve(self, target: pb.AttachTarget) -> Session:
        if target.WhichOneof("kind") == "session_id":
            return self.registry.get(target.session_id)
        return self.registry.by_rank(target.rank.rank, target.rank.name)

    @staticmethod
    async def _attached_command(session: Session, line: pb.Input, write: Callable[[pb.AttachEvent], Awaitable[None]]
                                ) -> pb.Reply:
        """pdb's reply to one line (its output streamed ahead of it), or why it could not run."""
        async def forward(text: str) -> None:
            await write(pb.AttachEvent(output=pb.OutputChunk(text=text)))

        try:
            return await session.execute(line.line, forward, eof=line.eof)
        except (SessionError, UsageError) as exc:
            return pb.Reply(output=f"*** {exc}\n", prompt=session.prompt, frame=session.frame,
                            ended=session.state is State.EXITED, reason=wire_value(session.end_reason))

    @staticmethod
    async def _announce_end(session: Session, write: Callable[[pb.AttachEvent], Awaitable[None]]) -> None:
        """Tell an idle client that its session ended elsewhere (continue, exit, kill)."""
        await session.ended.wait()
        await write(pb.AttachEvent(reply=pb.Reply(frame=session.frame, ended=True, reason=wire_value(session.end_reason))))

    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.WatchEvent]:
        async for event in self.registry.watch(exits=request.exits):
            yield event
