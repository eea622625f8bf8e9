"""What ranks answer through the control API: pdb's replies to an attached session's lines
and what others do there (`Shared`), `cast` and `compare` results, and `stacks`. Apart from
meshdbg.debugger.views (who is where) so that a scripted listing does not make these
classes (issue 22: CLI start); meshdbg.debugger.control loads them at the first call that
answers with them. Texts a worker chose pass meshdbg.debugger.sanitize.printable here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshdbg.debugger.sanitize import printable
from meshdbg.debugger.views import coords_of
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, PromptKind, StackSource, State

if TYPE_CHECKING:
    from meshdbg.debugger.views import SessionView


@dataclass(frozen=True)
class CastResult:
    """One session's answer to a cast."""

    session: SessionView
    output: str
    error: str = ""
    ended: bool = False
    no_answer: bool = False  # it did not answer within the deadline (`error` says so)
    prompt: str = ""  # where the session reads its next line now: pdb's `(Pdb) `, or `>>> ` after `interact`...

    @property
    def ok(self) -> bool:
        return not self.error

    def to_json(self) -> dict:
        return {"rank": self.session.rank, "name": self.session.name, "thread": self.session.thread,
                "pid": self.session.pid, "output": self.output if self.ok else self.error, "ok": self.ok}


FrameKey = tuple[str, str, int]  # filename, function, lineno


@dataclass(frozen=True)
class ThreadView:
    """One thread's Python stack, outermost frame first."""

    name: str
    thread_id: int
    main: bool
    frames: tuple[FrameKey, ...]


@dataclass(frozen=True)
class RankStacksView:
    """One rank's stacks (`stacks`): where they came from, or why there are none (`error`)."""

    rank: int
    name: str
    coords: dict[str, int]
    hostname: str
    pid: int
    state: State  # its last known state
    source: StackSource
    threads: tuple[ThreadView, ...]
    error: str

    @classmethod
    def from_pb(cls, info: pb.RankStacks) -> "RankStacksView":
        ident = info.identity
        threads = tuple(ThreadView(printable(t.thread_name), t.thread_id, t.main,
                                   tuple((printable(f.filename), printable(f.function), f.lineno) for f in t.frames))
                        for t in info.threads)
        return cls(ident.rank, printable(ident.name), coords_of(ident), printable(ident.hostname), ident.pid,
                   State.of(info.state), StackSource.of(info.source), threads, printable(info.error))


@dataclass(frozen=True)
class CompareView:
    """One rank's value of a `compare` expression, or why it has none (`error`)."""

    session: SessionView
    value: str
    error: str
    no_answer: bool = False  # it did not answer within the deadline (`error` says so)

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class PdbReply:
    """pdb's answer to one line typed in an attached session."""

    output: str
    prompt: str
    filename: str
    function: str
    lineno: int
    ended: bool
    # Why the session ended, when it did: the server's reason, or what broke the attach stream.
    reason: EndReason | str | None
    prompt_kind: PromptKind = PromptKind.PDB  # who reads the next line

    @property
    def detached(self) -> bool:
        """The attach's stream broke (its server went away, this client was cut off), not the
        session: a text reason, where the server's is an EndReason (a StrEnum, a str too)."""
        return self.ended and self.reason is not None and not isinstance(self.reason, EndReason)

    @classmethod
    def from_pb(cls, reply: pb.Reply) -> "PdbReply":
        frame = reply.frame  # (each read of a submessage makes a new Python object for it)
        return cls(reply.output, reply.prompt, printable(frame.filename), printable(frame.function),
                   frame.lineno, reply.ended, EndReason.of(reply.reason) if reply.ended else None,
                   PromptKind.of(reply.prompt_kind))


@dataclass(frozen=True)
class Shared:
    """What an attached client sees without asking (meshdbg.debugger.peers): a `line` that
    someone else sent at `prompt`, `output` (theirs, or the program's while pdb waits), or
    pdb's `reply` to their line."""

    line: str | None = None
    prompt: str = ""
    output: str = ""
    reply: PdbReply | None = None

    @classmethod
    def from_pb(cls, shared: pb.ProgramShared) -> "Shared":
        kind = shared.WhichOneof("kind")
        if kind == "echo":
            return cls(line=shared.echo.line, prompt=shared.echo.prompt)
        if kind == "reply":
            return cls(reply=PdbReply.from_pb(shared.reply))
        return cls(output=shared.output.text)
