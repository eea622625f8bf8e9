"""HostAgent: owns the lives of one host's ranks (spawn, monitor, signal, reap), as torch
elastic's agent owns its workers'.

It forks every rank of its HostPlan through the fork server (meshdbg.worker.mesh.zygote),
prefixes each rank's output line by line (meshdbg.host.output) into the sinks it is given,
and reports each rank's pid and exit to its `HostEvents`: the launcher itself in a single-host
run, the gRPC stream to the central `run` under `meshdbg host`. It never outlives its job:
`close` ends whatever still runs, and the fork server's children die with it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
from typing import Awaitable, Callable, Mapping, Protocol

from meshdbg.host.output import Flow, PrefixedLines, SinkFor, Stream, line_prefix, pipe_to, to_terminal
from meshdbg.host.plan import HostPlan, RankPlan
from meshdbg.host.spawner import ForkServer
from meshdbg.wire.environment import SHOWN_MARKS
from meshdbg.wire.logs import logger
from meshdbg.wire.racing import within

log = logger(__name__)
STOP_GRACE_S = 3.0
DRAIN_TIMEOUT_S = 2.0


class HostEvents(Protocol):
    """Where an agent reports its ranks' lives."""

    def spawned(self, rank: int, pid: int) -> None: ...

    def exited(self, rank: int, code: int) -> None:
        """`code`: the exit status, or -signal when a signal killed it."""


def reserve_port(host: str = "") -> socket.socket:
    """A socket bound to a port the OS picked, kept (not listening) for the mesh's lifetime.

    Holding it stops anyone else from being given the port; SO_REUSEADDR on both sides lets
    rank 0's torch.distributed store bind it as MASTER_PORT.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


async def until_quiet(done: Awaitable[object], progress: Callable[[], int], quiet_s: float) -> bool:
    """Wait for `done` as long as `progress()` (a count of what has moved) keeps growing: give
    up after `quiet_s` seconds without any. Whether `done` finished. Output still flowing is
    never cut short; output that stopped flowing (a pipe a daemonized grandchild keeps open)
    does not hold the job up for long."""
    task = asyncio.ensure_future(done)
    try:
        while True:
            before = progress()
            if await within(quiet_s, asyncio.shield(task)):
                return True
            if progress() == before:
                return False
    finally:
        task.cancel()


class HostAgent:
    """Runs one HostPlan on this host."""

    def __init__(self, events: HostEvents, *, env: Mapping[str, str] | None = None,
                 sinks: SinkFor = to_terminal(), flow: Flow | None = None) -> None:
        """`sinks(rank, stream)`: where that rank's prefixed lines go, each batch told whether its
        open session already showed it (the ranks mark that output, meshdbg.wire.shown_marks)."""
        self.events = events
        self.env = dict(os.environ if env is None else env)
        self.sinks = sinks
        self.flow = flow
        self._pids: dict[int, int] = {}  # pid → rank, while running
        self._early_exits: dict[int, int] = {}  # pid → code, reported before its spawn returned
        self._pumps: dict[int, list[PrefixedLines]] = {}  # rank → its stdout's and stderr's
        self._none_running = asyncio.Event()  # no spawned rank runs (also before the first spawn)
        self._none_running.set()
        self._forks: ForkServer | None = None

    def prepare(self) -> None:
        """Start the fork server now, so it imports while the caller does other work."""
        if self._forks is None:
            self._forks = ForkServer.start(self._on_exit)

    @property
    def running(self) -> bool:
        return bool(self._pids)

    async def start(self, plan: HostPlan) -> None:
        """Fork every rank of `plan`."""
        self.prepare()
        await asyncio.gather(*(self._spawn(plan, rank) for rank in plan.ranks))

    async def _spawn(self, plan: HostPlan, rank: RankPlan) -> None:
        prefix = line_prefix(rank.label)
        env = {**self.env, **rank.env, SHOWN_MARKS.name: "1"}
        out_fd, out_pump = await pipe_to(prefix, self.sinks(rank.rank, Stream.STDOUT), self.flow)
        err_fd, err_pump = await pipe_to(prefix, self.sinks(rank.rank, Stream.STDERR), self.flow)
        self._pumps[rank.rank] = [out_pump, err_pump]
        assert self._forks is not None  # start() prepared it
        pid = await self._forks.spawn(env, plan.argv, plan.cwd, out_fd, err_fd, plan.sys_path)
        self._pids[pid] = rank.rank
        self._none_running.clear()
        log.info("rank %d forked: pid %d", rank.rank, pid)
        self.events.spawned(rank.rank, pid)
        if pid in self._early_exits:  # it exited before this coroutine resumed
            self._on_exit(pid, self._early_exits.pop(pid))

    def _on_exit(self, pid: int, code: int) -> None:
        rank = self._pids.pop(pid, None)
        if rank is None:
            self._early_exits[pid] = code
            return
        if not self._pids:
            self._none_running.set()
        log.log(logging.INFO if code == 0 else logging.WARNING, "rank %d (pid %d) exited: %s", rank, pid,
                f"signal {-code}" if code < 0 else f"status {code}")
        self.events.exited(rank, code)

    def signal(self, signum: int) -> None:
        """Send `signum` to each running rank's process group (each rank leads its own,
        meshdbg.worker.mesh.zygote), so what a rank started stops with it."""
        for pid in list(self._pids):
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass  # exited; the fork server is about to report it

    async def stop(self, grace: float = STOP_GRACE_S) -> None:
        """Stop every rank still running: SIGTERM, then SIGKILL after `grace` seconds.

        Gives up after another `grace` seconds rather than raise: close() still has to stop
        the fork server, which kills what is left.
        """
        for signum in (signal.SIGTERM, signal.SIGKILL):
            if self._pids:
                log.info("sending %s to ranks %s", signal.Signals(signum).name, sorted(self._pids.values()))
            self.signal(signum)
            if await self.none_running_within(grace):
                return

    async def none_running_within(self, timeout: float) -> bool:
        """Whether every spawned rank has exited within `timeout` seconds."""
        return await within(timeout, self._none_running.wait())

    async def drained(self, quiet_s: float = DRAIN_TIMEOUT_S) -> None:
        """Wait for the ranks' output to be written out, while it flows (`until_quiet`)."""
        pumps = [pump for pair in self._pumps.values() for pump in pair]
        if pumps:
            await until_quiet(asyncio.gather(*(pump.closed for pump in pumps)),
                              lambda: sum(pump.received for pump in pumps), quiet_s)

    async def flushed(self, rank: int) -> None:
        """Return once what `rank` wrote before this call is in the sinks (PrefixedLines.handed_on)."""
        await asyncio.gather(*(pump.handed_on() for pump in self._pumps.get(rank, ())))

    async def close(self) -> None:
        """Stop what is left, then the fork server."""
        if self._pids:
            await self.stop()
        if self._forks is not None:
            self._forks.close()
            try:
                await asyncio.wait_for(asyncio.to_thread(self._forks.process.wait), STOP_GRACE_S)
            except asyncio.TimeoutError:
                self._forks.kill()
