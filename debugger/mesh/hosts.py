"""The hosts of a mesh as the central `run` sees them: one interface, a local and a remote kind.

`LocalHost` runs a HostAgent (meshdbg.host.agent) in this process: a single-host run. A remote
host (meshdbg.debugger.mesh.joining) relays the same calls to a `meshdbg host` agent over its
stream. The launcher drives both the same way: start a plan, stop, wait for output.
"""

from __future__ import annotations

import socket
from typing import Protocol

from meshdbg.host.agent import HostAgent, reserve_port
from meshdbg.host.output import RankLines, to_terminal
from meshdbg.host.plan import HostPlan
from meshdbg.host.pyspy import py_spy_stacks
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.vocabulary import HostState

LOOPBACK = "127.0.0.1"


class MeshEvents(Protocol):
    """What the launcher learns from its hosts."""

    output: RankLines  # every rank's output lines, for listeners in the run's process

    def spawned(self, host: "Host", rank: int, pid: int) -> None: ...

    def exited(self, rank: int, code: int, host_lost: bool = False) -> None: ...

    def shown(self, rank: int) -> bool:
        """Whether a console on the run's terminal shows `rank`'s session (or has just left it)."""


class Host(Protocol):
    """One host of the mesh, local or remote."""

    index: int
    hostname: str
    address: str  # its IP as the server sees it (no port)
    master_addr: str  # the address its ranks' peers reach it at (MASTER_ADDR, when it is host 0)
    master_port: int  # a port it holds for MASTER_PORT
    ranks: list[int]
    state: HostState

    async def start(self, plan: HostPlan) -> None: ...

    async def stop(self, grace: float) -> None: ...

    async def drained(self) -> None: ...

    async def flushed(self, rank: int) -> None:
        """Return once what `rank` wrote before this call has reached the run's sinks."""

    async def close(self) -> None: ...

    async def sample(self, pid: int, all_threads: bool, timeout: float) -> list[pb.ThreadStack]:
        """A rank's stacks taken from outside by py-spy on its host; PySpyError saying why not."""


def host_info(host: Host, placer: str) -> host_pb.HostInfo:
    """A host as `meshdbg hosts` lists it."""
    return host_pb.HostInfo(index=host.index, hostname=host.hostname, address=host.address, state=host.state.pb,
                            ranks=host.ranks, placer=placer)


class LocalHost:
    """This machine, running its ranks through an in-process HostAgent."""

    def __init__(self, events: MeshEvents, env: dict[str, str] | None) -> None:
        self.index = 0
        self.hostname = socket.gethostname()
        self.address = self.master_addr = LOOPBACK
        self._port = reserve_port(LOOPBACK)
        self.master_port = self._port.getsockname()[1]
        self.ranks: list[int] = []
        self.state = HostState.UP
        self._events = events
        self.agent = HostAgent(self, env=env, sinks=events.output.sinks(to_terminal(events.shown)))
        self.agent.prepare()  # the fork server imports while the server starts

    async def start(self, plan: HostPlan) -> None:
        self.ranks = [r.rank for r in plan.ranks]
        await self.agent.start(plan)

    def spawned(self, rank: int, pid: int) -> None:
        self._events.spawned(self, rank, pid)

    def exited(self, rank: int, code: int) -> None:
        self._events.exited(rank, code)
        if not self.agent.running:
            self.state = HostState.DONE

    async def stop(self, grace: float) -> None:
        await self.agent.stop(grace)

    async def drained(self) -> None:
        await self.agent.drained()

    async def flushed(self, rank: int) -> None:
        await self.agent.flushed(rank)

    async def sample(self, pid: int, all_threads: bool, timeout: float) -> list[pb.ThreadStack]:
        return await py_spy_stacks(pid, all_threads, timeout)

    async def close(self) -> None:
        try:
            await self.agent.close()
        finally:
            self._port.close()
