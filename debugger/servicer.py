"""The gRPC face of the session registry: methods named as in protos/debugger.proto.

Each method moves messages between the wire and `SessionRegistry`/`Session`, and turns
meshdbg errors into gRPC status codes. The logic lives in debugger.sessions.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import grpc

from debugger.connection import PROTOCOL_VERSION
from debugger.errors import MeshdbgError, NoMatchError, SessionError, UsageError
from debugger.proto import debugger_pb2 as pb
from debugger.proto import debugger_pb2_grpc as pb_grpc
from debugger.selection import ALL, parse_selection
from debugger.sessions import Session, SessionRegistry
from debugger.workers import WorkerRegistry

SERVER_VERSION = "0.1.0"

_STATUS = {UsageError: grpc.StatusCode.INVALID_ARGUMENT, NoMatchError: grpc.StatusCode.NOT_FOUND,
           SessionError: grpc.StatusCode.FAILED_PRECONDITION}


async def _abort(context: grpc.aio.ServicerContext, exc: MeshdbgError) -> None:
    code = next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), grpc.StatusCode.UNKNOWN)
    await context.abort(code, str(exc))


def version_problem(version: int) -> str | None:
    if version != PROTOCOL_VERSION:
        return f"protocol version {version} is not supported by this server (it speaks {PROTOCOL_VERSION})"
    return None


class DebuggerServicer(pb_grpc.DebuggerServicer):
    """Serves worker sessions and the control API over one session registry (and the workers)."""

    def __init__(self, registry: SessionRegistry, workers: WorkerRegistry | None = None) -> None:
        self.registry = registry
        self.workers = workers or WorkerRegistry(registry)

    # ---- worker side ------------------------------------------------------------------

    async def Session(self, request_iterator: AsyncIterator[pb.WorkerMessage], context: grpc.aio.ServicerContext
                      ) -> AsyncIterator[pb.ServerMessage]:
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a session must open with hello")
        problem = version_problem(first.hello.protocol_version)
        if problem:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        session = self.registry.open(first.hello)
        pump = asyncio.create_task(self._pump_worker(request_iterator, session))
        try:
            yield pb.ServerMessage(welcome=pb.Welcome(session_id=session.id))
            while (message := await session.outbox.get()) is not None:
                yield message
        finally:
            pump.cancel()
            session.on_end("", "the worker went away")

    @staticmethod
    async def _pump_worker(request_iterator: AsyncIterator[pb.WorkerMessage], session: Session) -> None:
        reason = "the worker went away"
        try:
            async for message in request_iterator:
                kind = message.WhichOneof("kind")
                if kind == "prompt":
                    session.on_prompt(message.prompt)
                elif kind == "completions":
                    session.on_completions(message.completions)
                elif kind == "ended":
                    session.on_end(message.ended.output, message.ended.reason)
                    return
        except (grpc.RpcError, asyncio.CancelledError):
            pass
        session.on_end("", reason)

    # ---- control side -----------------------------------------------------------------

    async def Handshake(self, request: pb.HandshakeRequest, context: grpc.aio.ServicerContext) -> pb.HandshakeReply:
        problem = version_problem(request.protocol_version)
        if problem:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        return pb.HandshakeReply(protocol_version=PROTOCOL_VERSION, server_version=SERVER_VERSION)

    async def List(self, request: pb.ListRequest, context: grpc.aio.ServicerContext) -> pb.ListReply:
        workers = [self.workers.info(w) for w in self.workers.workers()] if request.all else []
        return pb.ListReply(sessions=[session.info() for session in self.registry.sessions()], workers=workers)

    async def Interrupt(self, request: pb.InterruptRequest, context: grpc.aio.ServicerContext) -> pb.InterruptReply:
        try:
            ranks = self.workers.interrupt(parse_selection(request.selection) if request.selection else ALL)
        except MeshdbgError as exc:
            await _abort(context, exc)
        return pb.InterruptReply(ranks=ranks)

    async def Cast(self, request: pb.CastRequest, context: grpc.aio.ServicerContext) -> pb.CastReply:
        try:
            sessions = self.registry.select(parse_selection(request.selection))
        except MeshdbgError as exc:
            await _abort(context, exc)
        results = await asyncio.gather(*(self._cast_one(session, request.command) for session in sessions))
        return pb.CastReply(results=results)

    @staticmethod
    async def _cast_one(session: Session, command: str) -> pb.CastResult:
        try:
            reply = await session.execute(command)
        except SessionError as exc:
            return pb.CastResult(session=session.info(), error=str(exc))
        return pb.CastResult(session=session.info(), output=reply.output, ended=reply.ended)

    async def Continue(self, request: pb.ContinueRequest, context: grpc.aio.ServicerContext) -> pb.ContinueReply:
        try:
            selection = parse_selection(request.selection) if request.selection else ALL
            sessions = [s for s in self.registry.select(selection)]
        except MeshdbgError as exc:
            await _abort(context, exc)
        outcomes = await asyncio.gather(*(s.resume() for s in sessions), return_exceptions=True)
        resumed = [s.info() for s, outcome in zip(sessions, outcomes) if not isinstance(outcome, BaseException)]
        return pb.ContinueReply(resumed=resumed)

    async def Attach(self, request_iterator: AsyncIterator[pb.AttachRequest], context: grpc.aio.ServicerContext
                     ) -> AsyncIterator[pb.AttachEvent]:
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("target"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "attach must open with a target")
        try:
            session = self._resolve(first.target)
        except MeshdbgError as exc:
            await _abort(context, exc)
        events: asyncio.Queue[pb.AttachEvent | None] = asyncio.Queue()
        events.put_nowait(pb.AttachEvent(attached=session.info()))
        events.put_nowait(pb.AttachEvent(reply=session.replay().to_pb()))
        driver = asyncio.create_task(self._drive(request_iterator, session, events))
        watcher = asyncio.create_task(self._announce_end(session, events))
        try:
            while (event := await events.get()) is not None:
                yield event
        finally:
            driver.cancel()
            watcher.cancel()

    def _resolve(self, target: pb.AttachTarget) -> Session:
        if target.WhichOneof("kind") == "session_id":
            return self.registry.get(target.session_id)
        return self.registry.by_rank(target.rank.rank, target.rank.name)

    @staticmethod
    async def _drive(request_iterator: AsyncIterator[pb.AttachRequest], session: Session,
                     events: asyncio.Queue[pb.AttachEvent | None]) -> None:
        """Run each line the client sends; answer completions; stop when the client leaves."""
        async for request in request_iterator:
            kind = request.WhichOneof("kind")
            if kind == "input":
                try:
                    reply = (await session.execute(request.input.line)).to_pb()
                except SessionError as exc:
                    reply = pb.Reply(output=f"*** {exc}\n", prompt=session.prompt, frame=session.frame,
                                     ended=session.state == "exited", reason=session.end_reason)
                events.put_nowait(pb.AttachEvent(reply=reply))
                if reply.ended:
                    break
            elif kind == "complete":
                c = request.complete
                matches = await session.complete(c.text, c.line, c.begidx, c.endidx)
                events.put_nowait(pb.AttachEvent(completions=pb.Completions(request_id=c.request_id, matches=matches)))
        events.put_nowait(None)

    @staticmethod
    async def _announce_end(session: Session, events: asyncio.Queue[pb.AttachEvent | None]) -> None:
        """Tell an idle client that its session ended elsewhere (continue, exit, kill)."""
        await session.ended.wait()
        await asyncio.sleep(0)  # let a reply to the client's own command go first
        events.put_nowait(pb.AttachEvent(reply=pb.Reply(frame=session.frame, ended=True, reason=session.end_reason)))
        events.put_nowait(None)

    async def Watch(self, request: pb.WatchRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.WatchEvent]:
        async for event in self.registry.watch():
            yield event
