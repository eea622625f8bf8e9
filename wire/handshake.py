"""Asking a meshdbg server whether it takes our token and speaks our protocol: one unary call.

Both a control client (meshdbg.debugger.control) and a joining host agent (meshdbg.host.remote)
ask it first: a refusal of a unary call comes back as what it is (UNAUTHENTICATED,
FAILED_PRECONDITION), where a stream refused at once may end in gRPC's INTERNAL instead.
"""

from __future__ import annotations

import grpc

from meshdbg.wire.connection import PROTOCOL_VERSION, ConnectionInfo
from meshdbg.wire.environment import TLS_FINGERPRINT
from meshdbg.wire.errors import ConnectionFailed
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.wire.status import error_from_rpc


async def handshake(channel: grpc.aio.Channel, connection: ConnectionInfo, timeout: float | None = None,
                    wait_for_ready: bool = False) -> None:
    """The server at `connection`, over `channel`, answers and takes us; else a MeshdbgError
    says why not. `wait_for_ready`: a channel that is connecting again is waited for (within
    `timeout`), not taken for a server that is gone."""
    try:
        await pb_grpc.DebuggerStub(channel).Handshake(pb.HandshakeRequest(protocol_version=PROTOCOL_VERSION),
                                                      metadata=connection.metadata(), timeout=timeout,
                                                      wait_for_ready=wait_for_ready)
    except grpc.RpcError as exc:
        error = error_from_rpc(exc, connection.addr)
        if isinstance(error, ConnectionFailed) and not connection.fingerprint and "Socket closed" in str(error):
            error = ConnectionFailed(f"{error}; if it serves TLS, set {TLS_FINGERPRINT.name} to the fingerprint "
                                     f"`meshdbg serve --tls` printed (a TLS server closes a plain connection so)")
        raise error from None
