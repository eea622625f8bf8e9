"""The mesh as the IDE sees it: ranks (DAP threads) in groups stopped at the same stack (child sessions).

One `Mesh` per adapter follows the server's watch stream. A rank that stops in no live group
waits a moment (GROUP_SETTLE_S, so the ranks of one collective stop arrive together), then the
waiting ranks are grouped by their user stack (frames from the paused pdb, as `stacks` groups
ranks) and every attached parent is asked to open a child session per group (`startDebugging`).
A rank of a live group stays in it: its later stops, runs and end go to that group's child.
Breakpoints the IDE sets are kept per file and applied to every stopped rank's pdb, including
ranks that stop later (a file's lines, and the IDE's function breakpoints: pdb's `b FUNCTION`),
each by pdb's own lines (meshdbg.debugger.dap.breakpoints), and removed by its number (`clear N`:
a console's breakpoint on the same line stays). Commands the IDE sends to a rank's pdb
go through one attach per session, serialised per session, as the console's do.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Awaitable, Protocol

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.attached_session import AttachedSession
from meshdbg.debugger.format import rank_label
from meshdbg.debugger.selection import describe_ranks, ranks_text
from meshdbg.debugger.dap.breakpoints import IdeBreakpoint, UnusableBreakpoint
from meshdbg.debugger.dap.vocabulary import Category, Stopped, stopped_reason
from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.answers import PdbReply
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason, State, StopReason, WatchKind

GROUP_SETTLE_S = 0.1  # how long a new stop waits for the other ranks of the same stop
FUNCTIONS = ""  # the set of the IDE's function breakpoints, beside each file's (Mesh.breakpoints)
_BREAKPOINT_SET = re.compile(r"^Breakpoint (\d+) at (.+):(\d+)\s*$", re.M)


def position(view: SessionView | PdbReply) -> tuple[str, int, str]:
    """Where a session stands: (filename, lineno, function)."""
    return view.filename, view.lineno, view.function


class Listener(Protocol):
    """An IDE connection: a parent (told about new groups) or the child of one group."""

    def announce(self, group: "Group") -> None: ...
    def rank_stopped(self, rank: "Rank", reason: Stopped) -> None: ...
    def rank_continued(self, rank: "Rank") -> None: ...
    def rank_ended(self, rank: "Rank") -> None: ...
    def group_ended(self, group: "Group") -> None: ...
    def rank_output(self, category: Category, text: str, lines: int) -> None: ...


@dataclass(eq=False)
class Rank:
    """One rank of the mesh: a DAP thread, named as `list` names it (`rank 3 (hosts=0,gpus=3)`)."""

    thread_id: int
    rank: int
    label: str
    session: SessionView | None = None  # its first stopped session, while it has one
    shown: int | None = None  # the session its child last saw stopped
    ended: bool = False
    group: "Group | None" = None
    applied: dict[str, dict[str, "Applied"]] = field(default_factory=dict)  # the IDE's breakpoints in its process
    syncing: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass(frozen=True)
class Applied:
    """One of the IDE's breakpoints as a rank's pdb holds it."""

    wanted: IdeBreakpoint
    number: int | None  # pdb's number for it; None: not set (`why`)
    path: str = ""  # the file and line pdb set it on
    line: int = 0
    why: str = ""


@dataclass(eq=False)
class Group:
    """Ranks stopped at the same stack when it was opened: one child session."""

    id: int
    name: str
    ranks: list[Rank]
    child: Listener | None = None
    closed: bool = False

    @property
    def selection(self) -> str:
        return describe_ranks([r.rank for r in self.ranks])


def _finished(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        error = task.exception()
        print(f"meshdbg dap: {type(error).__name__}: {error}", file=sys.stderr, flush=True)


class Mesh:
    """The ranks, their groups and their breakpoints, from one control client's watch stream."""

    def __init__(self, client: ControlClient) -> None:
        self.client = client
        self.ranks: dict[tuple[str, int], Rank] = {}
        self.threads: dict[int, Rank] = {}
        self.groups: dict[int, Group] = {}
        self.parents: list[Listener] = []
        # what the IDE asked, by the set it replaces at once (a file's path, or FUNCTIONS) and
        # where pdb's `b` puts it (`FILE:LINE`, a function's name)
        self.breakpoints: dict[str, dict[str, IdeBreakpoint]] = {}
        self.post_mortem = True  # announce post-mortem stops ("uncaught" exception breakpoints)
        self._sessions: dict[int, SessionView] = {}
        self._waiting: set[Rank] = set()
        self._moving: set[int] = set()  # sessions running a command
        self._quiet: dict[int, int] = {}  # session -> commands of this adapter's own under way
        self.pausing: set[int] = set()  # sessions broken into by the IDE's pause: their next stop is a "pause"
        self._regroup: asyncio.Task[None] | None = None
        self._attached: dict[int, AttachedSession] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task] = set()

    # ---- following the server ------------------------------------------------------------

    async def follow(self) -> None:
        """Apply the server's changes until its watch stream ends."""
        async for kind, view, reason in self.client.watch(exits=True):
            if kind is WatchKind.EXITED:
                rank = self.ranks.get((view.name, view.rank))
                if rank is not None:
                    self._end(rank)
            elif kind is WatchKind.CLOSED and isinstance(view, SessionView):  # sessions close, workers exit
                self._closed(view, reason)
            elif kind is WatchKind.SYNCED:
                await self._known_workers()
            elif kind is WatchKind.JOINED:
                self.rank_of(view)
            elif kind in (WatchKind.OPENED, WatchKind.UPDATED) and isinstance(view, SessionView):
                self._sessions[view.id] = view
                if view.state is State.RUNNING and kind is WatchKind.UPDATED:
                    self._moving.add(view.id)
                elif view.state is State.STOPPED:
                    self._stopped(view, self._moved(view.id))

    def rank_of(self, view: SessionView | WorkerView) -> Rank:
        key = (view.name, view.rank)
        rank = self.ranks.get(key)
        if rank is None:
            thread_id = view.rank + 1 if view.rank + 1 not in self.threads else 1_000_000 + len(self.threads)
            rank = self.ranks[key] = self.threads[thread_id] = Rank(thread_id, view.rank, rank_label(view))
        return rank

    async def _known_workers(self) -> None:
        """Every worker's rank and label, running or not, so its output names it as its thread will."""
        try:
            workers = await self.client.workers()
        except MeshdbgError:
            return
        for worker in workers:
            if worker.state is not State.EXITED:
                self.rank_of(worker)

    def numbered(self, number: int) -> Rank | None:
        """The rank of that number (the launcher's output names ranks by number: one job)."""
        return next((r for r in self.ranks.values() if r.rank == number), None)

    def _moved(self, session_id: int) -> bool:
        """The session ran a command since its last stop, one of the IDE's or the console's
        (not one this adapter ran quietly, such as setting a breakpoint)."""
        if session_id not in self._moving:
            return False
        self._moving.discard(session_id)
        if self._quiet.get(session_id):
            self._quiet[session_id] -= 1
            return False
        return True

    def _stopped(self, view: SessionView, moved: bool) -> None:
        rank = self.rank_of(view)
        if rank.ended:  # a new process with the same rank (a restarted worker): a new thread life
            rank.ended, rank.group, rank.shown = False, None, None
            rank.applied = {}  # (its pdb holds none of the IDE's breakpoints yet)
        if rank.session is not None and rank.session.id < view.id and rank.session.id in self._sessions:
            return  # another thread of the rank stopped first: the rank shows that one
        rank.session = view
        self.spawn(self._on_stop(rank, view, moved))

    async def _on_stop(self, rank: Rank, view: SessionView, moved: bool) -> None:
        if view.reason == StopReason.POST_MORTEM and not self.post_mortem:
            return  # the IDE asked for no uncaught-exception stops: left to the console
        await self._sync_breakpoints(rank)
        group = rank.group
        if group is not None and not group.closed:
            new_stop = rank.shown != view.id  # a new session, not a step in one
            if (new_stop or moved) and group.child is not None:
                rank.shown = view.id
                reason = stopped_reason(view.reason) if new_stop else Stopped.STEP
                group.child.rank_stopped(rank, Stopped.PAUSE if view.id in self.pausing else reason)
            self.pausing.discard(view.id)
            return
        self._waiting.add(rank)
        self._group_soon()

    def _closed(self, view: SessionView, reason: EndReason | None) -> None:
        self._sessions.pop(view.id, None)
        attached = self._attached.pop(view.id, None)
        if attached is not None:
            self.spawn(attached.__aexit__(None, None, None))
        self._locks.pop(view.id, None)
        self._moving.discard(view.id)
        self._quiet.pop(view.id, None)
        self.pausing.discard(view.id)
        rank = self.ranks.get((view.name, view.rank))
        if rank is None or rank.session is None or rank.session.id != view.id:
            return
        rank.session = next((s for s in sorted(self._sessions.values(), key=lambda s: s.id)
                             if (s.name, s.rank) == (view.name, view.rank) and s.state is State.STOPPED), None)
        if reason is not None and not reason.rank_runs_on:
            self._end(rank)
        elif rank.session is None:
            self._waiting.discard(rank)
            if rank.group is not None and rank.group.child is not None:
                rank.group.child.rank_continued(rank)

    def _end(self, rank: Rank) -> None:
        if rank.ended:
            return
        rank.ended, rank.session = True, None
        self._waiting.discard(rank)
        group = rank.group
        if group is None or group.closed:
            return
        if group.child is not None:
            group.child.rank_ended(rank)
        if all(r.ended for r in group.ranks):
            self.close_group(group)

    def close_group(self, group: Group) -> None:
        """The group's child is over (its ranks all ended, or it disconnected); its ranks are
        free: their next stop opens a new child."""
        if group.closed:
            return
        group.closed = True
        self.groups.pop(group.id, None)
        for rank in group.ranks:
            if rank.group is group:
                rank.group = None
        if group.child is not None:
            group.child.group_ended(group)

    # ---- grouping --------------------------------------------------------------------------

    def _group_soon(self) -> None:
        """Have the waiting ranks grouped: by the grouping under way if there is one (it goes
        round again for them), else by a new one. One at a time, so that each round's ranks
        have had GROUP_SETTLE_S to arrive together."""
        if self._regroup is None or self._regroup.done():
            self._regroup = self.spawn(self._group_waiting())

    async def _group_waiting(self) -> None:
        """Group the waiting ranks in rounds, each GROUP_SETTLE_S after the last, until none
        waits. A rank that stops while a round queries its ranks' stacks finds this task under
        way and starts none: the next round announces it (with a single round, it would wait
        unannounced until some other rank stopped)."""
        while self._waiting:
            await asyncio.sleep(GROUP_SETTLE_S)
            if not self.parents:
                return  # announced when a parent attaches (`add_parent`)
            await self._group_round()

    async def _group_round(self) -> None:
        """Group the waiting ranks by stack and ask every parent to open a child per group."""
        waiting = [r for r in self._waiting if r.session is not None and not r.ended and r.group is None]
        self._waiting.clear()
        stacks = await asyncio.gather(*(self._stack_key(r) for r in waiting))
        by_stack: dict[tuple, list[Rank]] = {}
        for rank, stack in zip(waiting, stacks):
            by_stack.setdefault(stack, []).append(rank)
        for stack, ranks in sorted(by_stack.items(), key=lambda item: min(r.rank for r in item[1])):
            ranks.sort(key=lambda r: r.rank)
            where = f"{stack[-1][1]} ({os.path.basename(stack[-1][0])}:{stack[-1][2]})" if stack else "no stack"
            group = Group(max(self.groups, default=0) + 1, f"{ranks_text([r.rank for r in ranks])}: {where}", ranks)
            self.groups[group.id] = group
            for rank in ranks:
                rank.group, rank.shown = group, None
            for parent in self.parents:
                parent.announce(group)

    async def _stack_key(self, rank: Rank) -> tuple:
        if rank.session is None:  # its session closed before this task ran
            return ()
        try:
            answer = await self.client.query(rank.session.id, pb.QueryRequest(frames=pb.QueryFrames()))
        except MeshdbgError:
            return ()
        return tuple((f.filename, f.function, f.lineno) for f in answer.frames.frames)

    def add_parent(self, parent: Listener) -> None:
        """A parent session is configured: it hears of every group without a child, and of the
        stopped ranks in none."""
        self.parents.append(parent)
        for group in list(self.groups.values()):
            if group.child is None:
                parent.announce(group)
        for rank in self.ranks.values():
            if rank.session is not None and rank.group is None and not rank.ended:
                self._waiting.add(rank)
        if self._waiting:
            self._group_soon()

    # ---- driving ranks -----------------------------------------------------------------------

    def commanding(self, session_id: int) -> bool:
        """This adapter has a pdb line on its way to (or running in) the session."""
        lock = self._locks.get(session_id)
        return lock is not None and lock.locked()

    def hush(self, session_id: int, hushed: bool = True) -> None:
        """The session's next stop is no news to the IDE (a command whose caller says what
        changed); `hushed=False` takes that back for a command that did not run."""
        count = self._quiet.get(session_id, 0) + (1 if hushed else -1)
        self._quiet[session_id] = max(count, 0)

    async def command(self, session_id: int, line: str, quiet: bool = False) -> PdbReply:
        """pdb's reply to `line` in one session (through this adapter's attach to it); `quiet`:
        see `hush`."""
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            if quiet:
                self.hush(session_id)
            attached = self._attached.get(session_id)
            if attached is None:
                attached = self.client.attach(session_id=session_id)
                await attached.__aenter__()
                self._attached[session_id] = attached
            reply = await attached.send(line)
        self._note_reply(session_id, reply)
        return reply

    def _note_reply(self, session_id: int, reply: PdbReply) -> None:
        """What a reply says of where its session stands, known before the watch stream says it."""
        view = self._sessions.get(session_id)
        if view is None or reply.ended:
            return
        view = self._sessions[session_id] = dataclasses.replace(
            view, state=State.STOPPED, filename=reply.filename, lineno=reply.lineno, function=reply.function,
            prompt_kind=reply.prompt_kind)
        rank = self.ranks.get((view.name, view.rank))
        if rank is not None and rank.session is not None and rank.session.id == session_id:
            rank.session = view

    def live_session(self, rank: Rank) -> SessionView | None:
        """The rank's session as it is now (stopped, or running a command), if it has one."""
        return self._sessions.get(rank.session.id) if rank.session is not None else None

    async def set_breakpoints(self, kept: str, wanted: dict[str, IdeBreakpoint]) -> None:
        """The IDE's breakpoints of one set (a file's, or FUNCTIONS) by where pdb's `b` puts each,
        set in every stopped rank's pdb now, in the others' when they stop."""
        self.breakpoints[kept] = wanted
        await asyncio.gather(*(self._sync_breakpoints(r) for r in self.ranks.values() if r.session is not None))

    async def verify(self, rank: Rank, kept: str, where: str) -> Applied | None:
        """One breakpoint as `rank`'s pdb holds it (after syncing it); None if it has no session."""
        await self._sync_breakpoints(rank)
        return rank.applied.get(kept, {}).get(where)

    async def _sync_breakpoints(self, rank: Rank) -> None:
        """Make the rank's pdb hold the IDE's breakpoints: a breakpoint the IDE removed or
        changed is cleared, one it added or changed is made."""
        async with rank.syncing:
            session = rank.session
            if session is None:
                return
            for kept, wanted in list(self.breakpoints.items()):
                applied = rank.applied.setdefault(kept, {})
                for where in [where for where, held in applied.items() if wanted.get(where) != held.wanted]:
                    number = applied.pop(where).number
                    if number is not None:
                        await self._quietly(session.id, f"clear {number}")
                for where, breakpoint in wanted.items():
                    if where not in applied:
                        applied[where] = await self._make_breakpoint(session.id, where, breakpoint)

    async def _make_breakpoint(self, session_id: int, where: str, wanted: IdeBreakpoint) -> Applied:
        """`wanted` made in the session's pdb: `b WHERE`, then the lines that give it its
        condition, hit count or log message; cleared again if pdb refused one of them."""
        reply = await self._quietly(session_id, f"b {where}")
        found = _BREAKPOINT_SET.search(reply)
        if not found:
            return Applied(wanted, None, why=reply.strip().removeprefix("*** ") or "not set")
        number, path, line = int(found.group(1)), found.group(2), int(found.group(3))
        try:
            for then in wanted.lines_after_break(number):
                refused = (await self._quietly(session_id, then)).strip()
                if refused.startswith("***"):
                    raise UnusableBreakpoint(refused.removeprefix("*** "))
        except UnusableBreakpoint as exc:
            await self._quietly(session_id, f"clear {number}")
            return Applied(wanted, None, why=str(exc))
        return Applied(wanted, number, path, line)

    async def _quietly(self, session_id: int, line: str) -> str:
        """pdb's reply to a line of the adapter's own, whose stop is no news to the IDE."""
        try:
            return (await self.command(session_id, line, quiet=True)).output
        except MeshdbgError as exc:
            return f"*** {exc}"

    def spawn(self, coroutine: Awaitable[object]) -> asyncio.Task:
        """Run `coroutine` on its own, kept until done; a failure is said on stderr, not lost."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_finished)
        return task

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for attached in list(self._attached.values()):
            await attached.__aexit__(None, None, None)
        self._attached.clear()
