"""Rank selections: which sessions a command is for.

Also the target of `attach`: one session, by rank (`2`, `trainer 2`), by rank and thread
(`2 sidekick`) or by id (`#12`).

Forms (DESIGN §2): `ranks(3)`, `ranks(1,4,6)`, `ranks(2:10:2)`, `ranks(:)`,
`ranks(hosts=1, gpus=0:4)`, `ranks(gpus=(0,3))`, and the short forms `all`, `*`,
`3`, `0,3-5`. Positional items select ranks (their union); `dim=...` items select mesh
coordinates (all must hold). A selection that does not parse raises SelectionError pointing
at the offending character. Pure logic: no gRPC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Protocol, Sequence

from meshdbg.wire.coords import RANK_LIMIT, bounded_int
from meshdbg.wire.errors import NoMatchError, SelectionError, TargetError, UsageError

if TYPE_CHECKING:
    from meshdbg.debugger.views import SessionView

_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>[(),:=\-]))")


@dataclass(frozen=True)
class IndexSet:
    """A set of non-negative integers given as explicit values and half-open slices."""

    values: frozenset[int] = frozenset()
    slices: tuple[tuple[int | None, int | None, int], ...] = ()

    def __contains__(self, index: int) -> bool:
        if index in self.values:
            return True
        for start, stop, step in self.slices:
            lo = 0 if start is None else start
            if index >= lo and (stop is None or index < stop) and (index - lo) % step == 0:
                return True
        return False

    def union(self, other: "IndexSet") -> "IndexSet":
        return IndexSet(self.values | other.values, self.slices + other.slices)


EVERY = IndexSet(slices=((None, None, 1),))


class Placed(Protocol):
    """Anything with a rank and mesh coordinates: a session, a worker, their views."""

    @property
    def rank(self) -> int: ...

    @property
    def coords(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class Selection:
    """A parsed selection; `matches` says whether a session belongs to it."""

    text: str
    ranks: IndexSet | None = None  # None: any rank
    coords: Mapping[str, IndexSet] = field(default_factory=dict)

    def matches(self, rank: int, coords: Mapping[str, int]) -> bool:
        if self.ranks is not None and rank not in self.ranks:
            return False
        return all(dim in coords and coords[dim] in wanted for dim, wanted in self.coords.items())

    def unknown_dims(self, known: set[str]) -> list[str]:
        """Dimensions this selection names that no session has: a likely typo."""
        return sorted(set(self.coords) - known)

    def no_match(self, nothing: str, among: Iterable[Placed]) -> NoMatchError:
        """`no session matches ranks(gpu=1) (unknown dimension gpu; known: gpus)` (`nothing`: "no
        session matches"): the error when nothing `among` (the sessions or ranks it was matched
        against) matched, naming the dimensions it names that none of them has, else the ranks
        there are (`no session matches 5 (there are ranks 0-3)`, as `attach 5` says); neither
        when there was nothing to match. Every verb that selects says it so."""
        views = list(among)
        known = {dim for view in views for dim in view.coords}
        unknown = self.unknown_dims(known) if views else []
        if unknown:
            hint = f" (unknown dimension {', '.join(unknown)}; known: {', '.join(sorted(known)) or 'none'})"
        else:
            hint = f" (there are {ranks_text([view.rank for view in views])})" if views else ""
        return NoMatchError(f"{nothing} {self.text}{hint}")


ALL = Selection("all")


class _Parser:
    """Recursive-descent parser over the selection grammar; remembers positions for errors."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if not match or match.end() == pos:
                if text[pos:].strip() == "":
                    break
                start = pos + len(text[pos:]) - len(text[pos:].lstrip())
                if text[start] in "'\"":  # the shell's quoting, typed at the console (as the README's commands show it)
                    raise SelectionError(text, start, "a selection takes no quotes here (they are the shell's): "
                                                      "type it bare, e.g. ranks(hosts=1)")
                raise SelectionError(text, start, f"unexpected character {text[start]!r}")
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            pos = match.end()
        self.index = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def position(self) -> int:
        token = self.peek()
        return token[2] if token else len(self.text)

    def fail(self, problem: str) -> SelectionError:
        return SelectionError(self.text, self.position(), problem)

    def take(self, value: str) -> bool:
        token = self.peek()
        if token and token[0] == "op" and token[1] == value:
            self.index += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.take(value):
            raise self.fail(f"expected {value!r}")

    def next_item(self) -> None:
        """Between two items of a parenthesised list, which did not end with `)`: a `,`."""
        if not self.take(","):
            raise self.fail("expected ',' or ')'" if self.peek() else "expected ')' to close the parenthesis")

    def integer(self) -> int | None:
        token = self.peek()
        if token and token[0] == "int":
            value = bounded_int(token[1], RANK_LIMIT)
            if value is None:
                raise self.fail(f"number too large (ranks and coordinates are below {RANK_LIMIT})")
            self.index += 1
            return value
        return None

    def done(self) -> None:
        if self.peek() is not None:
            raise self.fail("unexpected text after the selection")

    def short_form(self) -> Selection:
        """`3`, `0,3-5`: ranks and inclusive ranges."""
        values: set[int] = set()
        slices = []
        while True:
            first = self.integer()
            if first is None:
                raise self.fail("expected a rank number")
            if self.take("-"):
                end = self.index
                last = self.integer()
                if last is None or last < first:
                    self.index = end
                    raise self.fail(f"expected a rank number >= {first} to end the range")
                slices.append((first, last + 1, 1))
            else:
                values.add(first)
            if not self.take(","):
                break
        self.done()
        return Selection(self.text, ranks=IndexSet(frozenset(values), tuple(slices)))

    def index_item(self) -> IndexSet:
        """An integer, a slice `a:b:c` (parts optional), or a tuple `(a, b, ...)`."""
        if self.take("("):
            values = set()
            while True:
                value = self.integer()
                if value is None:
                    raise self.fail("expected an integer")
                values.add(value)
                if self.take(")"):
                    return IndexSet(frozenset(values))
                self.next_item()
        start = self.integer()
        if not self.take(":"):
            if start is None:
                raise self.fail("expected an integer, a slice like 0:4, or a tuple like (0,3)")
            return IndexSet(frozenset({start}))
        stop = self.integer()
        step = 1
        if self.take(":"):
            given = self.integer()
            if given is not None:
                if given == 0:
                    self.index -= 1
                    raise self.fail("a slice step must be positive")
                step = given
        return IndexSet(slices=((start, stop, step),))

    def ranks_call(self) -> Selection:
        """`ranks(...)` with positional rank items and `dim=...` coordinate items."""
        self.index += 1  # the name "ranks"
        self.expect("(")
        ranks: IndexSet | None = None
        coords: dict[str, IndexSet] = {}
        if not self.take(")"):
            while True:
                token = self.peek()
                following = self.tokens[self.index + 1] if self.index + 1 < len(self.tokens) else None
                if token and token[0] == "name" and following and following[1] == "=":
                    if token[1] in coords:
                        raise self.fail(f"dimension {token[1]!r} given twice")
                    self.index += 2
                    coords[token[1]] = self.index_item()
                else:
                    if coords:
                        raise self.fail("rank positions must come before dim=... items")
                    item = self.index_item()
                    ranks = item if ranks is None else ranks.union(item)
                if self.take(")"):
                    break
                self.next_item()
        self.done()
        return Selection(self.text, ranks=ranks, coords=coords)

    def parse(self) -> Selection:
        token = self.peek()
        if token is None:
            raise self.fail("empty selection: try `all` or ranks(0)")
        if token[0] == "name" and token[1] == "ranks":
            return self.ranks_call()
        if token[0] == "name" and token[1] == "all":
            self.index += 1
            self.done()
            return Selection(self.text)
        if token[0] == "int":
            return self.short_form()
        raise self.fail("expected `all`, a rank list like 0,3-5, or ranks(...)")


def parse_selection(text: str) -> Selection:
    """Parse a rank selection, raising SelectionError that points at what is wrong."""
    if text.strip() in ("*", ":"):
        return Selection(text)
    return _Parser(text).parse()


SESSION_ID_LIMIT = 2**64  # session ids as uint64


@dataclass(frozen=True)
class AttachTarget:
    """Which session `attach` means: a rank (optionally of one worker name, optionally one of
    its threads, by name or id), or a session id."""

    rank: int | None = None
    name: str = ""
    session_id: int | None = None
    thread: str = ""
    following: bool = False  # the console let this rank run and comes back to its next stop


def parse_attach_target(text: str) -> AttachTarget:
    """`2`, `2 sidekick` (a thread of rank 2, by name or id), `trainer 2`, `trainer 2 sidekick`
    or `#12`; TargetError pointing at the offending word otherwise."""
    words = text.split()
    if len(words) == 1 and words[0].startswith("#"):
        session_id = bounded_int(words[0][1:], SESSION_ID_LIMIT)
        if session_id is not None:
            return AttachTarget(session_id=session_id)
    elif words and len(words) <= 3:
        named = bounded_int(words[0], RANK_LIMIT) is None  # `trainer 2 [thread]`, else `2 [thread]`
        rank_word = words[1] if named and len(words) > 1 else words[0]
        rank = bounded_int(rank_word, RANK_LIMIT)
        thread = words[2 if named else 1:]
        if rank is not None and len(thread) <= 1:
            return AttachTarget(rank=rank, name=words[0] if named else "", thread=thread[0] if thread else "")
    position = text.rfind(words[-1]) if words else 0
    raise TargetError("attach needs a rank: attach 2, attach 2 <thread>, attach <name> 2, or attach #<session id>",
                      position)


def is_thread(session: "SessionView", thread: str) -> bool:
    """Whether `thread` names the session's thread: its name, or its id (decimal)."""
    return thread in (session.thread, str(session.thread_id))


def thread_session(sessions: Sequence["SessionView"], target: AttachTarget) -> "SessionView":
    """The session of `target`'s rank (and name) whose thread is `target.thread`;
    NoMatchError naming the threads that rank has stopped in. A name that threads of several
    processes of the rank share (a pool's children, each with its MainThread) is a UsageError
    naming each by its id, which is unique (a main thread's is its pid)."""
    of_rank = [s for s in sessions if s.rank == target.rank and (not target.name or s.name == target.name)]
    named = [s for s in of_rank if is_thread(s, target.thread)]
    if len(named) == 1:
        return named[0]
    if named:
        ids = ", ".join(f"{s.thread_id} (pid {s.pid})" for s in sorted(named, key=lambda s: s.thread_id))
        raise UsageError(f"rank {target.rank} is stopped in a thread {target.thread} in {len(named)} processes; "
                         f"name one by its thread id: {ids}")
    threads = ", ".join(f"{s.thread} ({s.thread_id})" for s in of_rank) or "none"
    raise NoMatchError(f"rank {target.rank} has no session in thread {target.thread} (its threads: {threads})")


def ranks_text(ranks: Sequence[int], count: str | None = None) -> str:
    """`rank 3`, or `ranks 0-2,5`, then ` (4)` + `count` for several when `count` is given
    (`count=" ranks"`: `ranks 0-2,5 (4 ranks)`): every "rank or ranks" line meshdbg prints."""
    ordered = sorted(set(ranks))
    if len(ordered) == 1:
        return f"rank {ordered[0]}"
    return f"ranks {describe_ranks(ordered)}" + (f" ({len(ordered)}{count})" if count is not None else "")


def describe_ranks(ranks: list[int]) -> str:
    """Compact, sorted rank set: `0-2,5`."""
    ordered = sorted(set(ranks))
    parts: list[str] = []
    start: int | None = None
    prev = 0  # read only once start is set
    for rank in [*ordered, None]:
        if start is not None and (rank is None or rank != prev + 1):
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = None
        if rank is not None and start is None:
            start = rank
        if rank is not None:
            prev = rank
    return ",".join(parts)
