"""The registry of every live session on a server: opened, found, selected, listed and watched.

A plain instance passed to whoever needs it (the servicer, the workers' registry, the
collectives guard); it publishes opened/updated/closed events to watchers. No gRPC here.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
from typing import AsyncGenerator, Callable

from meshdbg.debugger.selection import Selection
from meshdbg.debugger.sessions import InfoParts, Session, Writer, fill_info
from meshdbg.wire.environment import RECONNECT_S
from meshdbg.wire.errors import NoMatchError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, State, WatchKind, wire_value

# Which changes an in-process watcher takes (read off the session as it changes): the others
# are never built nor queued for it, so a command's two state flips wake no one who ignores them.
Interest = Callable[[WatchKind, Session], bool]

_ORDER = operator.attrgetter("order")


class _Published:
    """A session's change as published: what its watch event says, taken at once with no
    message built (every command publishes twice, on its way), and the event built once, by
    the first watcher that takes it (issue 22: 6-8 us of each flip of a `p x` inside
    `meshdbg run`, whose console watches)."""

    __slots__ = ("_kind", "_parts", "_reason", "_event")

    def __init__(self, kind: WatchKind, parts: InfoParts, reason: EndReason | None) -> None:
        self._kind, self._parts, self._reason = kind, parts, reason
        self._event: pb.WatchEvent | None = None

    def event(self) -> pb.WatchEvent:
        if self._event is None:
            self._event = pb.WatchEvent(kind=self._kind.pb, reason=wire_value(self._reason))
            fill_info(self._event.session, self._parts)
        return self._event


def _process_of(session: Session) -> tuple[str, int]:
    return session.hostname, session.pid


class SessionRegistry:
    """Every live session, by server-assigned id; publishes changes to watchers."""

    def __init__(self) -> None:
        self._sessions: dict[int, Session] = {}
        self._sorted: list[Session] | None = None  # sessions(), until one opens or closes
        self.listing: bytes | None = None  # listed_bytes(), until a session opens, closes or changes
        self._by_process: dict[tuple[str, int], list[Session]] = {}  # (hostname, pid) → its live sessions
        self._ids = itertools.count(1)
        # queue → (wants worker exits, the kinds of session change it takes and which of those: None for all)
        self._watchers: dict[asyncio.Queue[_Published | pb.WatchEvent | None],
                             tuple[bool, frozenset[WatchKind] | None, Interest | None]] = {}
        self.closing = False  # the server shuts down on purpose: broken streams are ends, not silences
        self.parked: set[Writer] = set()  # session streams that wait for their process's next stop
        self.tasks: set[asyncio.Task] = set()  # background watches of silent sessions (meshdbg.debugger.liveness)
        self.reconnect_s = RECONNECT_S.get()  # how long they may stay silent (read at start: a bad value stops it)

    async def say_goodbye(self, reason: str, timeout: float) -> None:
        """The server shuts down on purpose: tell every session's worker (bounded by `timeout`),
        so each continues at once instead of waiting for the server to come back."""
        self.closing = True
        for task in self.tasks:
            task.cancel()
        goodbye = pb.ServerMessage(goodbye=pb.KeepGoodbye(reason=reason))
        farewells = asyncio.gather(*(s.writer(goodbye) for s in self._sessions.values()),
                                   *(write(goodbye) for write in self.parked), return_exceptions=True)
        try:
            await asyncio.wait_for(farewells, timeout)
        except TimeoutError:
            pass  # a worker too slow to take it sees its stream end instead

    def open(self, identity: pb.Identity, write: Writer) -> Session:
        """Register a new session whose server-to-worker messages go through `write`; or, for
        a stop re-registered after its stream broke (`identity.resumes_session`), that session
        again, reached through `write` from now on."""
        resumed = self._sessions.get(identity.resumes_session)
        identity.ClearField("resumes_session")
        if resumed is not None and resumed.state is not State.EXITED and resumed.hostname == identity.hostname \
                and resumed.pid == identity.pid and resumed.thread_id == identity.thread_id:
            resumed.reclaim(write)
            return resumed
        session = Session(next(self._ids), identity, self, write)
        self._sessions[session.id] = session
        self._sorted = self.listing = None
        self._by_process.setdefault(_process_of(session), []).append(session)
        self.publish(WatchKind.OPENED, session)
        for other in self._others_of_thread(session):
            if other.state is State.NOT_ANSWERING:
                other.on_end("", EndReason.STOPPED_AGAIN)
        return session

    def stopped_again(self, session: Session) -> bool:
        """Whether `session`'s thread has another live session. A thread stops in one session
        at a time, so one whose stream broke is over once its thread opened another: the
        hello of a stop that a stalled server read after the worker gave up on that stream
        and opened a new one (not a silent stop to keep, which only it re-registers)."""
        return bool(self._others_of_thread(session))

    def _others_of_thread(self, session: Session) -> list[Session]:
        return [other for other in self._by_process.get(_process_of(session), ())
                if other is not session and other.thread_id == session.thread_id]

    def close(self, session: Session, reason: EndReason) -> None:
        if self._sessions.pop(session.id, None) is not None:
            self._sorted = self.listing = None
            key = _process_of(session)
            siblings = self._by_process[key]
            siblings.remove(session)
            if not siblings:
                del self._by_process[key]
            self.publish(WatchKind.CLOSED, session, reason)

    def all_of_process(self, hostname: str, pid: int) -> list[Session]:
        """Every live session of the process `pid` on `hostname` (one per thread stopped)."""
        return list(self._by_process.get((hostname, pid), ()))

    def of_process(self, hostname: str, pid: int) -> Session | None:
        """The first live session (in `sessions()` order) of the process `pid` on `hostname`,
        found without a pass over every session (a worker listing asks once per worker)."""
        siblings = self._by_process.get((hostname, pid))
        return min(siblings, key=_ORDER) if siblings else None

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: int) -> bool:
        """Whether the session of that id is still open."""
        return session_id in self._sessions

    def sessions(self) -> list[Session]:
        """Live sessions ordered by rank, then name, then thread."""
        if self._sorted is None:
            self._sorted = sorted(self._sessions.values(), key=_ORDER)
        return list(self._sorted)

    def listed_bytes(self) -> bytes:
        """Every live session as a ListReply's `sessions` (serialized, in `sessions()` order),
        kept until one opens, closes or changes: a listing polled while nothing moves costs
        nothing but sending it."""
        if self.listing is None:
            self.listing = b"".join([session.listed_bytes() for session in self.sessions()])
        return self.listing

    def get(self, session_id: int) -> Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise NoMatchError(f"no session with id {session_id}") from None

    def by_rank(self, rank: int, name: str = "") -> Session:
        """The session of a rank; among several threads, the one stopped first."""
        found = [s for s in self.sessions() if s.rank == rank and (not name or s.name == name)]
        if not found:
            who = f"{name} rank {rank}" if name else f"rank {rank}"
            live = ", ".join(sorted({str(s.rank) for s in self._sessions.values()})) or "none"
            raise NoMatchError(f"no session for {who} (ranks with sessions: {live})")
        return min(found, key=lambda s: s.id)

    def select(self, selection: Selection) -> list[Session]:
        """Sessions in `selection`; NoMatchError (with a hint about typos) when none."""
        chosen = [s for s in self.sessions() if selection.matches(s.rank, s.coords)]
        if not chosen:
            raise selection.no_match("no session matches", self._sessions.values())
        return chosen

    def publish(self, kind: WatchKind, session: Session, reason: EndReason | None = None) -> None:
        """Queue the change to every watcher interested (every command publishes twice: the
        change is taken only if one is, its event built when one reads it)."""
        change: _Published | None = None
        for queue, (_, kinds, interest) in self._watchers.items():
            if (kinds is None or kind in kinds) and (interest is None or interest(kind, session)):
                if change is None:
                    change = _Published(kind, session.info_parts(), reason)
                queue.put_nowait(change)

    def end_watches(self) -> None:
        """End every watch stream (the server stops): each returns at its next read."""
        for queue in self._watchers:
            queue.put_nowait(None)

    def publish_worker(self, kind: WatchKind, worker: pb.WorkerInfo) -> None:
        """A worker process connected (JOINED) or ended (EXITED): tell the watchers that asked."""
        event = pb.WatchEvent(kind=kind.pb, worker=worker)
        for queue, (exits, _, _) in self._watchers.items():
            if exits:
                queue.put_nowait(event)

    async def watch(self, exits: bool = False, interest: Interest | None = None,
                    kinds: frozenset[WatchKind] | None = None) -> AsyncGenerator[pb.WatchEvent, None]:
        """An `opened` event per live session, then `synced`, then every change from then on
        (with `exits`, also an `exited` event for every worker process that ends; with
        `kinds`, only changes of those kinds, and with `interest`, only those it takes: a
        command's two state changes ask no watcher of other kinds).

        Watchers need no separate listing: the replay and the changes come from one
        subscription, so nothing can close unseen between the two.
        """
        queue: asyncio.Queue[_Published | pb.WatchEvent | None] = asyncio.Queue()
        self._watchers[queue] = (exits, kinds, interest)
        try:
            for session in self.sessions():
                yield pb.WatchEvent(kind=WatchKind.OPENED.pb, session=session.info())
            yield pb.WatchEvent(kind=WatchKind.SYNCED.pb)
            while True:
                event = await queue.get()
                if event is None:  # the server is stopping: end the stream, do not wait to be cancelled
                    return
                yield event.event() if isinstance(event, _Published) else event
        finally:
            self._watchers.pop(queue, None)
