"""How the adapter's mesh (meshdbg.debugger.dap.mesh) groups stopped ranks into child sessions,
at moments a real mesh reaches only under load: the watch stream is scripted and the ranks'
stacks answer when the test lets them."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Callable

from meshdbg.debugger.dap.mesh import Group, Mesh
from meshdbg.debugger.views import Change, SessionView
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import State, StopReason, WatchKind

WAIT_S = 5.0


class ScriptedServer:
    """The part of ControlClient the mesh groups ranks with: `watch` yields the changes put in
    `changes`; `query` (a rank's stack) says it was `asked`, then answers once `answer` is set."""

    def __init__(self) -> None:
        self.changes: asyncio.Queue[Change] = asyncio.Queue()
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def watch(self, exits: bool = False) -> AsyncIterator[Change]:
        while True:
            yield await self.changes.get()

    async def query(self, session_id: int, question: pb.QueryRequest, timeout_s: float = 0) -> pb.QueryAnswer:
        self.asked.set()
        await self.answer.wait()
        return pb.QueryAnswer()


class Parent:
    """A parent session: the groups it is asked to open a child for, in order."""

    def __init__(self) -> None:
        self.announced: asyncio.Queue[Group] = asyncio.Queue()

    def announce(self, group: Group) -> None:
        self.announced.put_nowait(group)

    async def next_group(self) -> list[int]:
        """The ranks of the next group announced."""
        try:
            group = await asyncio.wait_for(self.announced.get(), WAIT_S)
        except TimeoutError:
            raise AssertionError(f"no group announced within {WAIT_S:g} s") from None
        return [r.rank for r in group.ranks]


def stopped(rank: int) -> Change:
    """A new session of `rank`, stopped at a breakpoint (session id rank + 1)."""
    view = SessionView(id=rank + 1, name="", rank=rank, coords={"gpus": rank}, hostname="host", pid=100 + rank,
                       thread="MainThread", thread_id=1, state=State.STOPPED, reason=StopReason.BREAKPOINT,
                       filename="ide_target.py", function="inner", lineno=22, context={})
    return WatchKind.OPENED, view, None


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run until `condition()` holds."""
    while not condition():
        await asyncio.sleep(0)


def test_a_rank_that_stops_while_a_group_is_being_formed_is_announced_next() -> None:
    """Rank 0 stops while the group of rank 1 (stopped earlier) waits for its stack: once that
    group is announced, so is one of rank 0 (it used to wait unannounced until another rank
    stopped: in `run --dap`, under load, the IDE never heard of it)."""

    async def scenario() -> list[list[int]]:
        server, parent = ScriptedServer(), Parent()
        mesh = Mesh(server)
        mesh.add_parent(parent)
        mesh.spawn(mesh.follow())
        try:
            server.changes.put_nowait(stopped(1))
            await asyncio.wait_for(server.asked.wait(), WAIT_S)  # rank 1's group is being formed
            server.changes.put_nowait(stopped(0))
            await asyncio.wait_for(until(lambda: mesh.numbered(0) in mesh._waiting), WAIT_S)
            server.answer.set()
            return [await parent.next_group(), await parent.next_group()]
        finally:
            await mesh.close()  # (cancels the following)

    assert asyncio.run(scenario()) == [[1], [0]]
