"""What the control API hands its callers about who is where: plain frozen views of sessions,
workers and hosts, and watch changes, each built from its protobuf message (`from_pb`) and,
where scripts read it, with the JSON shape of DESIGN's contract (`to_json`). What ranks answer
(pdb replies, cast and compare results, stacks) is meshdbg.debugger.answers: a scripted
`meshdbg list --json` loads only this module's classes (each frozen dataclass costs its
process ~1.5 ms to make, issue 22). No gRPC here; meshdbg.debugger.control makes the calls.

Every text a worker chose (its name, host, threads, context labels, the filenames and function
names of its frames) passes meshdbg.debugger.sanitize.printable here, so no listing, watch line,
stack tree, announcement or cast header shows a terminal an escape sequence a rank planted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from collections.abc import Sequence
from typing import Any, ClassVar, Iterable, TypedDict, TypeVar, overload

from meshdbg.debugger.sanitize import printable
from meshdbg.wire.coords import format_coords
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.vocabulary import HOST_LOST, EndReason, HostState, PromptKind, State, StopReason, WatchKind


@dataclass(frozen=True)
class HostView:
    """One host of a run (the `meshdbg hosts --json` element)."""

    index: int
    hostname: str
    address: str
    state: HostState
    ranks: list[int]
    placer: str

    @classmethod
    def from_pb(cls, info: host_pb.HostInfo) -> "HostView":
        return cls(info.index, info.hostname, info.address, HostState.of(info.state), list(info.ranks), info.placer)

    def to_json(self) -> dict:
        return asdict(self)

T = TypeVar("T")


class Waited(list):
    """What answered a command that waits on ranks, as a list; `no_answer` the ranks that did
    not within its deadline (or, where `not_resumed` is not told apart, were not answering at
    all); `not_resumed` (rank, why) of those a `continue` left paused."""

    def __init__(self, answered: Iterable[T], no_answer: Iterable[int] = (),
                 not_resumed: Iterable[tuple[int, str]] = ()) -> None:
        super().__init__(answered)
        self.no_answer = sorted(set(no_answer))
        self.not_resumed = sorted(set(not_resumed))


class _MeshView:
    """What session and worker views share: coordinates as text, and the JSON form."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # each subclass is a dataclass

    coords: dict[str, int]

    @property
    def coords_text(self) -> str:
        return format_coords(self.coords)

    def to_json(self) -> dict:
        """`asdict`, as fast as a dict display: fields hold no dataclass and no container but
        flat dicts, which are copied (asdict's deep copy was 9/10 of a `list --json` of 10,000)."""
        return {name: dict(value) if isinstance(value := getattr(self, name), dict) else value
                for name in _field_names(type(self))}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: Any) -> tuple[str, ...]:
    """The names of the fields of the dataclass `cls`, in order (asked once per view in JSON)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in fields(cls))
    return names


class _Placement(TypedDict):
    """The fields session and worker views both take from an identity and a frame."""

    name: str
    rank: int
    coords: dict[str, int]
    hostname: str
    pid: int
    reason: str
    filename: str
    function: str
    lineno: int


def _placement(identity: pb.Identity, frame: pb.Frame) -> _Placement:
    """The fields session and worker views both take from an identity and a frame."""
    return _Placement(name=printable(identity.name), rank=identity.rank, coords=coords_of(identity),
                hostname=printable(identity.hostname), pid=identity.pid,
                reason=StopReason.of(identity.reason) if identity.reason else "", filename=printable(frame.filename),
                function=printable(frame.function), lineno=frame.lineno)


def coords_of(identity: pb.Identity) -> dict[str, int]:
    """A rank's mesh coordinates, by dimension."""
    return {printable(coord.dim): coord.index for coord in identity.coords}


def _session_fields(info: pb.SessionInfo) -> dict[str, Any]:
    """Every field of a SessionView, read from its message."""
    ident = info.identity
    return {"id": info.id, "thread": printable(ident.thread_name), "thread_id": ident.thread_id,
            "state": State.of(info.state), "prompt_kind": PromptKind.of(info.prompt_kind),
            "context": {printable(key): printable(value) for key, value in ident.context.items()} if ident.context else {},
            **_placement(ident, info.frame)}


@dataclass(frozen=True)
class SessionView(_MeshView):
    """One session as users and scripts see it (the `list --json` element).

    A view made `from_pb` reads its fields from its message the first time one is used: a
    listing of 10,000 sessions is 10,000 views, built in the time of the parse, not 20 times it
    (issue 22), and a caller that reads none of a view's fields pays nothing for them.
    """

    id: int
    name: str
    rank: int
    coords: dict[str, int]
    hostname: str
    pid: int
    thread: str
    thread_id: int
    state: State
    reason: str  # a StopReason
    filename: str
    function: str
    lineno: int
    context: dict[str, str]
    prompt_kind: PromptKind = PromptKind.PDB  # who reads its next line: pdb, a `commands` block, `interact`, `debug`
    _info: ClassVar[pb.SessionInfo | None] = None  # the message of a view made from_pb

    @classmethod
    def from_pb(cls, info: pb.SessionInfo) -> "SessionView":
        view = object.__new__(cls)
        object.__setattr__(view, "_info", info)
        if info.prompt_kind > _PDB_PROMPT:  # a field with a default is found on the class, never read lazily
            object.__setattr__(view, "prompt_kind", PromptKind.of(info.prompt_kind))
        return view

    def to_json(self) -> dict:
        if self._info is not None and "id" not in self.__dict__:  # never read: straight from the message
            values = _session_fields(self._info)
            return {name: values[name] for name in _field_names(SessionView)}
        return super().to_json()

    def __getattr__(self, name: str) -> Any:
        """A field of a view made from_pb, read with all the others from its message on first
        use (Python asks only for what the instance lacks)."""
        if self._info is None or name not in _field_names(SessionView):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__.update(_session_fields(self._info))
        return self.__dict__[name]


_PDB_PROMPT = PromptKind.PDB.pb


class Sessions(Sequence[SessionView]):
    """A listing's sessions, as a read-only list whose view of each session is made the first
    time it is read (issue 22: `list()` of 10,000 spent as long making views as receiving and
    parsing them; a caller that counts, or reads one session, makes no other view). It equals
    any sequence of the same views (`== []` holds for an empty listing)."""

    __slots__ = ("_infos", "_views")

    def __init__(self, infos: Sequence[pb.SessionInfo]) -> None:
        self._infos = infos
        self._views: list[SessionView | None] = [None] * len(infos)

    def __len__(self) -> int:
        return len(self._infos)

    @overload
    def __getitem__(self, index: int) -> SessionView: ...

    @overload
    def __getitem__(self, index: slice) -> list[SessionView]: ...

    def __getitem__(self, index: int | slice) -> SessionView | list[SessionView]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        view = self._views[index]
        if view is None:
            view = self._views[index] = SessionView.from_pb(self._infos[index])
        return view

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return repr(list(self))


@dataclass(frozen=True)
class WorkerView(_MeshView):
    """One worker process as `list --all` shows it: running, stopped, starting or exited.

    The JSON form has the `list --json` keys plus `exit_code`, `signal` and `launcher` (empty
    for a process with no agent stream, meshdbg.debugger.hook_processes); the `reason` of a
    rank that exited with its lost host is `host lost`.
    """

    name: str
    rank: int
    coords: dict[str, int]
    hostname: str
    pid: int
    state: State
    reason: str  # a StopReason while stopped, else empty
    filename: str
    function: str
    lineno: int
    exit_code: int | None
    signal: int | None
    launcher: str

    @classmethod
    def from_pb(cls, info: pb.WorkerInfo) -> "WorkerView":
        placement = _placement(info.identity, info.frame)
        if info.host_lost:
            placement["reason"] = HOST_LOST
        return cls(state=State.of(info.state), exit_code=info.exit_code if info.HasField("exit_code") else None,
                   signal=info.signal if info.HasField("signal") else None, launcher=info.launcher, **placement)

    @property
    def registered(self) -> bool:
        """It has (or had) an agent stream, and with it a launcher, an exit status, interrupts:
        not a process known only by its session streams (only the breakpoint hook set), whose
        launcher is empty."""
        return bool(self.launcher)


Change = tuple[WatchKind, "SessionView | WorkerView", "EndReason | None"]


def change_of(event: pb.WatchEvent) -> Change:
    """(kind, session or, for JOINED and EXITED, worker, end reason for CLOSED) of one watch event."""
    kind = WatchKind.of(event.kind)
    if kind is WatchKind.EXITED or kind is WatchKind.JOINED:
        return kind, WorkerView.from_pb(event.worker), None
    return kind, SessionView.from_pb(event.session), EndReason.of(event.reason) if kind is WatchKind.CLOSED else None
