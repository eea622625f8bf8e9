"""meshdbg.wire.status: what a user is told of a gRPC failure."""

from __future__ import annotations

import grpc

from meshdbg.wire.errors import ConnectionFailed
from meshdbg.wire.status import CLIENT_TRANSPORT_FAILED, error_from_rpc


class Failure(grpc.RpcError):
    """A gRPC error as grpc.aio raises it: a code and its details."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def test_a_write_that_failed_in_the_clients_transport_is_a_lost_connection() -> None:
    """(A line typed into `attach --plain` as its server was killed said "server error at ADDR:
    INTERNAL: Internal error from Core", 1 run in 3 under load.)"""
    error = error_from_rpc(Failure(grpc.StatusCode.INTERNAL, CLIENT_TRANSPORT_FAILED), "127.0.0.1:4000")
    assert isinstance(error, ConnectionFailed) and str(error) == "the connection to the server at 127.0.0.1:4000 failed"


def test_a_servers_own_internal_error_is_shown_as_it_said_it() -> None:
    error = error_from_rpc(Failure(grpc.StatusCode.INTERNAL, "the registry broke"), "127.0.0.1:4000")
    assert not isinstance(error, ConnectionFailed)
    assert str(error) == "server error at 127.0.0.1:4000: INTERNAL: the registry broke"
