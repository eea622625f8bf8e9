"""What every RPC, worker and control alike, passes before its handler: the token check, and
decoding the request so that a malformed one is INVALID_ARGUMENT, not gRPC's UNKNOWN."""

from __future__ import annotations

import hmac
import inspect
from typing import Any, AsyncIterator, Awaitable, Callable, NoReturn, TypeAlias, TypeVar, cast

import grpc
from google.protobuf.message import DecodeError

from meshdbg.wire.connection import AUTH_HEADER
from meshdbg.wire.logs import logger

_Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"
_F = TypeVar("_F", bound=Callable[..., Any])
log = logger(__name__)


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses any call whose `authorization: Bearer <token>` does not match the server's."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def _refused(self, details: grpc.HandlerCallDetails) -> str | None:
        """Why the call may not run (for the log), None when its token is the server's."""
        presented = dict(details.invocation_metadata or ()).get(AUTH_HEADER, "")
        if not presented:
            return "no token"
        if isinstance(presented, str) and hmac.compare_digest(presented.encode(), self._expected):
            return None
        return "wrong token"

    async def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler | None]],
                                details: grpc.HandlerCallDetails) -> _Handler | None:
        handler = await continuation(details)
        if handler is None:
            return None
        refused = self._refused(details)
        if refused is None:
            log.debug("call %s", details.method)
            return handler
        return _refusal(handler, details.method, refused)


def _refusal(handler: _Handler, method: str, why: str) -> _Handler:
    """A handler of the same shape as `handler` that fails with UNAUTHENTICATED (and logs who
    was refused, and `why`)."""
    message = "missing or wrong token (set MESHDBG_TOKEN or use the server's connection file)"

    async def refuse(context: grpc.aio.ServicerContext) -> None:
        log.warning("refused %s from %s: %s", method, context.peer(), why)
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def unary(request: object, context: grpc.aio.ServicerContext) -> None:
        await refuse(context)

    async def streaming(request: object, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        await refuse(context)
        yield  # pragma: no cover - makes this an async generator

    return _reshaped(handler, streaming if handler.response_streaming else unary, handler.request_deserializer)


class DecodingInterceptor(grpc.aio.ServerInterceptor):
    """Decodes each request itself: bytes that are not the method's message (a fuzzer, a
    foreign client) end the call with INVALID_ARGUMENT naming the problem. gRPC would run the
    deserializer outside any handler and answer UNKNOWN, the status of a server bug."""

    def __init__(self) -> None:
        self._decoding: dict[_Handler, _Handler] = {}  # each method's handler, wrapped once (not per call)

    async def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[_Handler | None]],
                                details: grpc.HandlerCallDetails) -> _Handler | None:
        handler = await continuation(details)
        if handler is None or handler.request_deserializer is None:
            return None
        if getattr(handler.stream_stream, "reads_requests", False):
            return handler  # its `Requests` decode as it reads them
        decoding = self._decoding.get(handler)
        if decoding is None:  # a worker's stream holds no closures of its own: 10,000 live ones stay small
            decoding = self._decoding[handler] = _decoding(handler)
        return decoding


def _decoding(handler: _Handler) -> _Handler:
    """`handler` taking raw bytes, which it decodes with the deserializer it had."""
    parse = handler.request_deserializer
    assert parse is not None  # DecodingInterceptor passes only handlers that decode
    # gRPC's aio server runs coroutine and async generator functions; the stubs type the sync ones.
    behaviour = cast(Callable[..., Any], handler.unary_unary or handler.unary_stream or handler.stream_unary
                     or handler.stream_stream)

    async def decode(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
        try:
            return parse(raw)
        except DecodeError as exc:
            await _malformed(context, exc)

    async def each(raws: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for raw in raws:  # every message of a stream: parsed here, no coroutine of its own
            try:
                message = parse(raw)
            except DecodeError as exc:
                await _malformed(context, exc)
            yield message

    async def request(raw: Any, context: grpc.aio.ServicerContext) -> Any:
        return each(raw, context) if handler.request_streaming else await decode(raw, context)

    if inspect.isasyncgenfunction(behaviour):  # gRPC tells the two kinds of handler apart by their function
        async def streamed(raw: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            async for reply in behaviour(await request(raw, context), context):
                yield reply
        return _reshaped(handler, streamed, None)

    async def decoded(raw: Any, context: grpc.aio.ServicerContext) -> Any:
        return await behaviour(await request(raw, context), context)
    return _reshaped(handler, decoded, None)


def reads_requests(handler: _F) -> _F:
    """Marks a stream-stream handler that reads its requests with `Requests(context)`, not from
    gRPC's request iterator: DecodingInterceptor passes it as it is."""
    setattr(handler, "reads_requests", True)
    return handler


class Requests:
    """A stream's requests, read straight off its context, each decoded by gRPC with the method's
    deserializer: a malformed one ends the call with INVALID_ARGUMENT, as DecodingInterceptor
    would. gRPC's request iterator is an async generator living with the stream between two
    messages; a worker's session stream, which waits for days, holds only this."""

    __slots__ = ("_context",)

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self._context = context

    def __aiter__(self) -> "Requests":
        return self

    async def __anext__(self) -> Any:
        try:
            message = await self._context.read()
        except DecodeError as exc:
            await _malformed(self._context, exc)
        if message is grpc.aio.EOF:
            raise StopAsyncIteration
        return message


async def _malformed(context: grpc.aio.ServicerContext, exc: DecodeError) -> NoReturn:
    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request: {exc}")


def _reshaped(handler: _Handler, behaviour: Callable[..., Any],
              deserializer: Callable[[bytes], Any] | None) -> _Handler:
    """A handler of the same shape (streaming or not, each way) as `handler` running `behaviour`."""
    factories = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    shape = (handler.request_streaming, handler.response_streaming)
    return factories[shape](behaviour, request_deserializer=deserializer,
                            response_serializer=passing_bytes(handler.response_serializer))


def passing_bytes(serialize: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """`serialize`, which also takes a reply already serialized (bytes) as it is: a listing
    joins the cached bytes of its sessions instead of building a message to serialize again."""
    if serialize is None:
        return None
    return lambda reply: reply if isinstance(reply, bytes) else serialize(reply)
