"""The one vocabulary of states and reasons, mirroring the proto enums of debugger.proto.

Each member is a `str` (what `list --json` prints and a person reads) that knows its wire
value (`.pb`) and is found from one (`of`). Nothing else in meshdbg spells these words: code
compares against members, never against literals.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Self

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import host_pb2 as host_pb


class _Mirror(StrEnum):
    """A StrEnum whose member NAME is the proto value's name without the enum's prefix."""

    _by_wire: dict[int, Any]  # each wire value's member (`_bind`)
    _wire: int  # each member's wire value (`_bind`)

    @property
    def pb(self) -> Any:
        """The wire value of this member (an int; typed Any because the stubs give each proto
        enum a type of its own, which a message's constructor asks for)."""
        return self._wire

    @classmethod
    def of(cls, value: int) -> Self:
        """The member for a wire value; for UNSPECIFIED (an older or empty field), the one
        `_bind` named, else ValueError."""
        try:
            member: Self = cls._by_wire[value]
            return member
        except KeyError:
            raise ValueError(f"{cls.__name__} has no value for {value}") from None


def _bind(cls: type[_Mirror], proto_enum: EnumTypeWrapper, prefix: str, unspecified: _Mirror | None = None) -> None:
    """Tie `cls` to its proto enum; `unspecified` is what an UNSPECIFIED value reads as. Each
    member's wire value, and each wire value's member, are looked up here once: every command
    asks for some (a prompt's kind, a reply's), a listing of thousands for many."""
    for member in cls:
        member._wire = proto_enum.Value(prefix + member.name)
    cls._by_wire = {}
    for name, value in proto_enum.items():
        named = cls.__members__.get(name.removeprefix(prefix)) or unspecified
        if named is not None:
            cls._by_wire[value] = named


class State(_Mirror):
    """Where a session or a worker is in its life."""

    STARTING = "starting"
    RUNNING = "running"
    STOPPED = "stopped"
    EXITED = "exited"
    NOT_ANSWERING = "not answering"  # alive as far as the server can tell, but silent



class StopReason(_Mirror):
    """Why a session opened."""

    BREAKPOINT = "breakpoint"
    INTERRUPT = "interrupt"
    POST_MORTEM = "post-mortem"  # an uncaught exception: the rank crashed
    POST_MORTEM_CALL = "pdb.post_mortem"  # the program asked for one, on an exception it handles

    @property
    def post_mortem(self) -> bool:
        """The stop is on a traceback (no next line to step to), whether the rank crashed or not."""
        return self in (StopReason.POST_MORTEM, StopReason.POST_MORTEM_CALL)



class EndReason(_Mirror):
    """Why a session ended, as a person reads it after `session ended (...)`."""

    CONTINUED = "continued"
    QUIT = "quit"
    THREAD_FINISHED = "the thread finished"
    WORKER_GONE = "the worker went away"
    SERVER_STOPPED = "the server stopped"
    STOPPED_AGAIN = "its thread stopped again"  # a hello a stalled server read after its worker gave up on it


    @property
    def rank_runs_on(self) -> bool:
        """The session is over but its rank still runs (only WORKER_GONE may mean it died)."""
        return self is not EndReason.WORKER_GONE


class WatchKind(_Mirror):
    """What a watch event says about its session."""

    OPENED = "opened"
    SYNCED = "synced"
    UPDATED = "updated"
    CLOSED = "closed"
    EXITED = "exited"  # a worker process ended (a watch that asked for exits)
    JOINED = "joined"  # a worker process connected (a watch that asked for exits)


class StackSource(_Mirror):
    """Where a rank's stacks came from (`meshdbg stacks`)."""

    AGENT = "agent"
    SESSION = "session"
    PY_SPY = "py-spy"
    NONE = "not answering"



class PromptKind(_Mirror):
    """Who reads a session's next line (sent with each prompt, never guessed from its text)."""

    PDB = "pdb"
    COMMANDS = "commands"
    INTERACT = "interact"
    DEBUG = "debug"

    @property
    def pdbs_own(self) -> bool:
        """pdb itself reads the next line (its prompt, or the recursive debugger's), not a
        `commands` block or `interact`: a step or `continue` is a pdb command there, and
        Ctrl-D detaches; elsewhere Ctrl-D ends that prompt's input."""
        return self in (PromptKind.PDB, PromptKind.DEBUG)


class HostState(_Mirror):
    """Where a host of a multi-host `run` is (`meshdbg hosts`); a rank whose host is LOST
    exited with the reason `host lost`."""

    JOINING = "joining"
    UP = "up"
    LOST = "lost"
    DONE = "done"


HOST_LOST = f"host {HostState.LOST}"  # the reason (`list --all`) of a rank that exited with its host


_bind(State, pb.State, "STATE_", unspecified=State.RUNNING)
_bind(StopReason, pb.StopReason, "STOP_REASON_", unspecified=StopReason.BREAKPOINT)
_bind(EndReason, pb.EndReason, "END_REASON_", unspecified=EndReason.WORKER_GONE)
_bind(WatchKind, pb.WatchKind, "WATCH_KIND_")
_bind(StackSource, pb.StackSource, "STACK_SOURCE_", unspecified=StackSource.NONE)
_bind(PromptKind, pb.QueryPromptKind, "QUERY_PROMPT_KIND_", unspecified=PromptKind.PDB)
_bind(HostState, host_pb.HostState, "HOST_STATE_")


def wire_value(member: _Mirror | None) -> Any:
    """`member.pb`, or UNSPECIFIED (0) for None: for optional fields such as an end reason."""
    return member.pb if member is not None else 0
