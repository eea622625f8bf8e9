"""gRPC status codes ⇄ meshdbg errors: the one place the transport's failures are translated.

Servers answer a MeshdbgError with `status_code_of(error)`; clients (workers, the CLI, the
console) turn a failed call back into a MeshdbgError with `error_from_rpc`, so nothing above
this module sees a `grpc.RpcError`.
"""

from __future__ import annotations

import grpc

from meshdbg.wire.errors import (AuthenticationFailed, ConnectionFailed, MeshdbgError, NoMatchError,
                                 ProtocolMismatch, SessionError, UsageError)

# What grpc.aio says of a call whose operation failed in the client's own transport (the
# connection dropped under a write): never a status a server sent, so the connection failed.
CLIENT_TRANSPORT_FAILED = "Internal error from Core"
_STATUS_OF = ((UsageError, grpc.StatusCode.INVALID_ARGUMENT), (NoMatchError, grpc.StatusCode.NOT_FOUND),
              (SessionError, grpc.StatusCode.FAILED_PRECONDITION))


def status_code_of(error: MeshdbgError) -> grpc.StatusCode:
    """The status code a server answers `error` with; its message travels as the details."""
    return next((code for kind, code in _STATUS_OF if isinstance(error, kind)), grpc.StatusCode.UNKNOWN)


def error_from_rpc(exc: grpc.RpcError, addr: str) -> MeshdbgError:
    """Turn a gRPC failure at `addr` into the MeshdbgError a user should see."""
    code = exc.code() if hasattr(exc, "code") else None
    details = (exc.details() if hasattr(exc, "details") else "") or ""
    if code == grpc.StatusCode.UNAVAILABLE:
        return ConnectionFailed(f"no meshdbg server reachable at {addr} ({details.splitlines()[0] if details else 'unavailable'})")
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return AuthenticationFailed(f"the server at {addr} refused our token: {details}")
    if code == grpc.StatusCode.FAILED_PRECONDITION and details.startswith("protocol"):
        return ProtocolMismatch(details)
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return UsageError(details)
    if code == grpc.StatusCode.NOT_FOUND:
        return NoMatchError(details)
    if code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED):
        return SessionError(details)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ConnectionFailed(f"the server at {addr} did not answer in time")
    if code == grpc.StatusCode.INTERNAL and details == CLIENT_TRANSPORT_FAILED:
        return ConnectionFailed(f"the connection to the server at {addr} failed")
    return MeshdbgError(f"server error at {addr}: {code.name if code else 'unknown'}: {details}")
