"""Token authentication for every RPC, worker and control alike."""

from __future__ import annotations

import hmac
from typing import Awaitable, Callable

import grpc

from meshdbg.wire.connection import AUTH_HEADER


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses any call whose `authorization: Bearer <token>` does not match the server's."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def _authorized(self, details: grpc.HandlerCallDetails) -> bool:
        presented = dict(details.invocation_metadata or ()).get(AUTH_HEADER, "")
        return hmac.compare_digest(presented.encode(), self._expected)

    async def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
                                details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or self._authorized(details):
            return handler
        return _refusal(handler)


def _refusal(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that fails with UNAUTHENTICATED."""
    message = "missing or wrong token (set MESHDBG_TOKEN or use the server's connection file)"

    async def unary(request, context: grpc.aio.ServicerContext):
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def streaming(request, context: grpc.aio.ServicerContext):
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - makes this an async generator

    factories = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    shape = (handler.request_streaming, handler.response_streaming)
    behaviour = streaming if handler.response_streaming else unary
    return factories[shape](behaviour, request_deserializer=handler.request_deserializer,
                            response_serializer=handler.response_serializer)
