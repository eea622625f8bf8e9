"""The errors meshdbg raises to its users, in one place.

    MeshdbgError                 base; `exit_code` is what the CLI exits with
    ├── UsageError               a malformed command or selection (exit 2)
    │   └── PositionedError      ... at a place in the typed text (`problem`, `position`)
    │       ├── SelectionError   a rank selection that does not parse; points at the bad part
    │       ├── TargetError      an attach target that is not a rank, `name rank` or `#id`
    │       └── (LineError)      a console line that cannot run (meshdbg.debugger.console)
    │   └── UntrustedFile        a connection file or folder another user could have written
    ├── NoMatchError             a selection or target that matched no session (exit 1)
    ├── SessionError             a session could not run the command (gone, busy) (exit 1)
    ├── ConnectionFailed         no server reachable at the address (exit 3)
    │   ├── AuthenticationFailed the server refused our token (exit 3)
    │   └── ProtocolMismatch     client and server speak different protocol versions (exit 3)
    ├── MeshError                the process mesh could not start, or a rank died mid-call
    └── ActorError               an actor endpoint raised on a rank; carries the rank and the
                                 remote traceback

No gRPC here: meshdbg.wire.status translates gRPC failures into these at the boundary (and
these into status codes for servers), so callers never see a `grpc.RpcError`.
"""

from __future__ import annotations


class MeshdbgError(Exception):
    """Base of every error meshdbg reports to a user."""

    exit_code = 1


class UsageError(MeshdbgError):
    """The user asked for something malformed."""

    exit_code = 2


class UntrustedFile(UsageError):
    """A connection file or runtime folder another user owns or can write: trusting it would
    send our token to, or run code for, whoever planted it (ssh refuses such keys too)."""


class PositionedError(UsageError):
    """A usage error at a place in the text the user typed: `problem` says what, `position` where.

    Selections, attach targets and console lines all raise one, so a console can put the cursor
    at the bad part and a CLI can point at it.
    """

    def __init__(self, problem: str, position: int, message: str | None = None) -> None:
        self.problem = problem
        self.position = position
        super().__init__(message or problem)


class SelectionError(PositionedError):
    """A rank selection that does not parse; the message points at the bad part."""

    def __init__(self, text: str, position: int, problem: str) -> None:
        self.text = text
        super().__init__(problem, position, f"bad selection ({problem}):\n  {text}\n  {' ' * position}^")


class TargetError(PositionedError):
    """An attach target that does not parse; `position` points at the offending word."""


class NoMatchError(MeshdbgError):
    """Nothing matched: no session for that selection, rank or id."""


class SessionError(MeshdbgError):
    """A session could not run a command: it ended, or another command is running."""


class ConnectionFailed(MeshdbgError):
    """No meshdbg server could be reached."""

    exit_code = 3


class ServerStalled(SessionError):
    """A stream broke while its server did not answer for a while; the server answers again
    (it was stopped, or its machine loaded): the sessions are as they were."""


class MeshError(MeshdbgError):
    """The process mesh could not start, or a rank went away while a call waited for it."""


class ActorError(MeshdbgError):
    """An actor endpoint (or constructor) raised on a rank.

    `rank` and `coords` say where, `type` is the remote exception's qualified type and
    `remote_traceback` its traceback as formatted in the worker. With several failing ranks
    `others` holds the rest, by rank.
    """

    def __init__(self, rank: int, coords: dict[str, int], type: str, message: str, remote_traceback: str,
                 others: tuple["ActorError", ...] = ()) -> None:
        self.rank = rank
        self.coords = coords
        self.type = type
        self.message = message
        self.remote_traceback = remote_traceback
        self.others = others
        where = ",".join(f"{dim}={index}" for dim, index in coords.items())
        more = f" (and {len(others)} more rank{'s' if len(others) != 1 else ''})" if others else ""
        super().__init__(f"rank {rank} ({where}) raised {type}: {message}{more}\n{remote_traceback.rstrip()}")


class AuthenticationFailed(ConnectionFailed):
    """The server refused the token we presented."""


class ProtocolMismatch(ConnectionFailed):
    """The server speaks another protocol version."""
