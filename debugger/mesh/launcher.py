"""The mesh launcher: a DebugClient, the hosts that run the ranks, and the mesh's lifecycle.

    launcher = MeshLauncher(MeshShape.parse("hosts=2,gpus=4"), ["train.py", "--lr", "3e-4"])
    await launcher.start()            # server, hosts placed, every rank spawned
    await launcher.wait_ready()       # every rank registered its agent stream
    status = await launcher.wait()    # the first failing rank's status (0 when all succeed)
    await launcher.close()

The launcher is the central half; each host's half (spawn, output, exits) is a HostAgent
(meshdbg.host.agent), in this process for a single-host run (LocalHost) or a `meshdbg host`
agent on another node (meshdbg.debugger.mesh.joining). The placer says which. Each rank gets
the environment of meshdbg.debugger.mesh.shape.rank_env and runs meshdbg.worker.mesh.bootstrap,
its output prefixed line by line. By default the first failing rank stops the whole mesh
(SIGTERM, then SIGKILL after a grace period), and so does a lost host (status 255); not under
a rank paused in pdb, though: then once it goes on (`_stop_for_failure`). The exit
status of a rank killed by a signal is 128 + the signal, as in a shell. Async: it runs on one
event loop, the CLI's (`meshdbg run`) or the background loop of a ProcMesh.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence

from meshdbg.host.agent import STOP_GRACE_S
from meshdbg.host.output import RankLines
from meshdbg.host.pyspy import PySpyError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.racing import first_of, within
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from meshdbg.debugger.certificates import ServerCertificate
from meshdbg.debugger.format import failure_text
from meshdbg.debugger.service import DebugClient
from meshdbg.debugger.sessions import Session
from meshdbg.debugger.workers import Worker
from meshdbg.wire.coords import pb_coords
from meshdbg.wire.environment import breakpoints_off
from meshdbg.wire.errors import SessionError
from meshdbg.debugger.mesh.hosts import Host, LocalHost
from meshdbg.debugger.mesh.placement import Target, plan_host
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.wire.logs import logger
from meshdbg.wire.vocabulary import HOST_LOST, State, StopReason

if TYPE_CHECKING:
    import grpc

log = logger(__name__)
HOST_LOST_STATUS = 255
LEFT_FLUSH_S = 5.0  # how long a rank's lines may take through its host once the console left it (a loaded host)
UNATTENDED_CHECK_S = 1.0  # how often a run with no terminal looks at its post-mortems (`end_unattended_post_mortems`)
RELEASE_TIMEOUT_S = 10.0  # how long ending a post-mortem may take (its rank's pdb leaves it)


def status_of(code: int) -> int:
    """A process's exit status as a shell reports it: 128 + signal when killed by one."""
    return 128 - code if code < 0 else code


def _holds_the_mesh(session: Session, failed: int) -> bool:
    """Whether `session` keeps the mesh from stopping for rank `failed`'s failure: a stop of
    another rank, not a post-mortem nobody is attached to (`Launcher._stop_for_failure`)."""
    return session.rank != failed and (
        session.attached or StopReason.of(session.identity.reason) is not StopReason.POST_MORTEM)


class Placer(Protocol):
    """Where the ranks run: `local` (this machine), `join` (agents that dial in), ..."""

    name: str

    def prepare(self, launcher: "MeshLauncher") -> list[Host]:
        """Called before the server starts; the hosts known at once (to close if the start fails)."""

    async def place(self, launcher: "MeshLauncher") -> Sequence[Host]:
        """The hosts, by index, once they are all there (UsageError when they are not)."""

    async def close(self) -> None:
        """Release what placing started (an srun step), once the hosts are closed."""


class LocalPlacer:
    """Every rank on this machine, through one in-process agent."""

    name = "local"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = None if env is None else dict(env)
        self._host: LocalHost | None = None

    def prepare(self, launcher: "MeshLauncher") -> list[Host]:
        self._host = LocalHost(launcher, self.env)  # starts the fork server early
        return [self._host]

    async def place(self, launcher: "MeshLauncher") -> list[Host]:
        assert self._host is not None  # prepare() made it
        return [self._host]

    async def close(self) -> None:
        pass


class MeshLauncher:
    """Starts and stops one mesh of worker processes around its own DebugClient."""

    def __init__(self, shape: MeshShape, argv: list[str], *, name: str = "worker", post_mortem: bool = True,
                 stop_on_failure: bool = True, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 publish: bool = True, sys_path: list[str] | None = None, tls: ServerCertificate | None = None,
                 placer: Placer | None = None, bind: str = "127.0.0.1", advertise: str | None = None) -> None:
        self.shape = shape
        self.argv = list(argv)
        self.name = name
        self.post_mortem = post_mortem
        # PYTHONBREAKPOINT=0 where the run starts turns breakpoint() off in its ranks, as Python's own
        self.breakpoints = not breakpoints_off(os.environ if env is None else env)
        self.stop_on_failure = stop_on_failure
        self.cwd = cwd or os.getcwd()
        self.sys_path = sys_path  # the workers' sys.path (None: the bootstrap sets it as python does)
        self.placer = placer or LocalPlacer(env)
        self.hosts: list[Host] = []
        self.server = DebugClient(host=bind, publish=publish, what=" ".join(["run", *self.argv])[:200], tls=tls,
                                  services=[self._add_host_services], advertise=advertise)
        self.workers: dict[int, Worker] = {}  # by rank
        self._host_of: dict[int, Host] = {}  # rank → the host that forked it
        self.server.workers.outside = self._sample_outside
        self.exits: dict[int, int] = {}  # rank → status, in the order they exited
        self.first_failure: tuple[int, int] | None = None  # (rank, status)
        self.placed = False  # every host is in place (a placer that waits for hosts says so itself meanwhile)
        self.running_at_first_failure = 0  # how many other ranks still ran when it came
        self.lost_ranks: set[int] = set()  # exited with their lost host
        self.started_at = time.monotonic()
        self.console_shows: Callable[[int], bool] = lambda rank: False  # a console here shows this rank's session
        # Told what the person should know of the job's course (`run` prints it): why a
        # failure's stop waits, a post-mortem no one came to.
        self.on_notice: Callable[[str], None] = lambda text: None
        self._left: collections.Counter[int] = collections.Counter()  # ranks the console left, their lines on the way
        self._flushing: set[asyncio.Task[None]] = set()
        self.output = RankLines()  # every rank's output lines as they come (run --dap's adapter listens)
        self._all_exited = asyncio.Event()  # every rank has exited
        self._stopping = False

    @property
    def size(self) -> int:
        return self.shape.size

    def _add_host_services(self, server: grpc.aio.Server) -> None:
        from meshdbg.debugger.mesh.joining import HostsServicer

        host_grpc.add_HostsServicer_to_server(HostsServicer(self), server)

    async def start(self) -> None:
        """Start the DebugClient, place the hosts, then spawn every rank on its host (ranks
        dial the join URL, which pins the certificate, when the run has one)."""
        self.hosts = self.placer.prepare(self)
        connection = await self.server.start()
        addr = connection.join or connection.addr
        self.hosts = list(await self.placer.place(self))
        self.placed = True
        master = self.hosts[0]
        target = Target(self.argv, self.cwd, self.name, addr, connection.token, connection.fingerprint,
                        self.post_mortem, self.sys_path, breakpoints=self.breakpoints)
        plans = [plan_host(self.shape, len(self.hosts), host.index, target, master.master_addr, master.master_port)
                 for host in self.hosts]
        log.info("mesh %s: %d ranks on %d host(s) (%s), running %s in %s", self.shape, self.size, len(self.hosts),
                 ", ".join(host.hostname for host in self.hosts), self.argv, self.cwd)
        await asyncio.gather(*(host.start(plan) for host, plan in zip(self.hosts, plans)))

    def spawned(self, host: Host, rank: int, pid: int) -> None:
        """A host forked `rank` as `pid`: listed as starting until it connects."""
        self._host_of[rank] = host
        self.workers[rank] = self.server.workers.launched(pb.Identity(
            name=self.name, rank=rank, hostname=host.hostname, pid=pid, coords=pb_coords(self.shape.coords(rank))))

    async def _sample_outside(self, worker: Worker, all_threads: bool, timeout: float) -> list[pb.ThreadStack]:
        """py-spy `worker` on the host that forked it (PySpyError for one this run did not fork)."""
        host = self._host_of.get(worker.rank)
        if host is None or self.workers.get(worker.rank) is not worker:
            raise PySpyError(f"rank {worker.rank} (pid {worker.pid}) was not started by this run")
        return await host.sample(worker.pid, all_threads, timeout)

    def exited(self, rank: int, code: int, host_lost: bool = False) -> None:
        """A rank ended (`code`: its status or -signal), or its host was lost with it."""
        if rank in self.exits:
            return
        if host_lost:
            self.lost_ranks.add(rank)
        self.exits[rank] = status = HOST_LOST_STATUS if host_lost else status_of(code)
        worker = self.workers.get(rank)
        if worker is not None:
            self.server.workers.record_exit(worker, code if code >= 0 else None, -code if code < 0 else None, host_lost)
        if status != 0 and self.first_failure is None and not self._stopping:
            self.first_failure = (rank, status)
            self.running_at_first_failure = self.size - len(self.exits)
            log.warning("rank %d failed first (%s)%s", rank, failure_text(status),
                        "; stopping the mesh" if self.stop_on_failure and self.running_at_first_failure else "")
            if self.stop_on_failure:
                asyncio.get_running_loop().create_task(self._stop_for_failure(rank, status))
        if len(self.exits) == self.size:
            self._all_exited.set()

    def shown(self, rank: int) -> bool:
        """Whether `rank`'s lines that its session showed stay out of the run's log: while a
        console on the run's terminal shows that session, and after it leaves, until what the
        rank wrote before is through its host (`console_left`)."""
        return rank in self._left or self.console_shows(rank)

    def console_left(self, rank: int) -> None:
        """The console stopped showing `rank` (detach, `c`, another rank). What the rank
        printed in its session before that is still on its way to the log (the rank's pipe,
        its host's stream) while the session's copy came on the worker's own stream: until its
        host says it has handed that on (LEFT_FLUSH_S at most), those lines count as shown, so
        they do not print twice."""
        host = self._host_of.get(rank)
        if host is None:
            return
        self._left[rank] += 1
        task = asyncio.get_running_loop().create_task(self._flush_left(host, rank))
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    async def _flush_left(self, host: Host, rank: int) -> None:
        try:
            if not await within(LEFT_FLUSH_S, host.flushed(rank)):
                log.info("rank %d's output did not come through host %d within %g s", rank, host.index, LEFT_FLUSH_S)
        finally:
            self._left[rank] -= 1
            if not self._left[rank]:
                del self._left[rank]

    def host_lost(self, host: Host) -> None:
        """A host's agent went away: every rank of it that had not ended is lost with it."""
        for rank in host.ranks:
            self.exited(rank, 0, host_lost=True)

    async def wait_ready(self) -> float:
        """Wait until every rank has registered (or already exited); seconds since construction."""
        await asyncio.gather(*(self._ready(worker) for worker in self.workers.values()))
        return time.monotonic() - self.started_at

    def not_ready(self) -> list[int]:
        """The ranks that have neither registered nor exited yet (started or not), in order."""
        return [rank for rank in range(self.size) if (worker := self.workers.get(rank)) is None
                or not (worker.connected.is_set() or worker.gone.is_set())]

    @staticmethod
    async def _ready(worker: Worker) -> None:
        await first_of(worker.connected.wait(), worker.gone.wait())

    async def wait(self) -> int:
        """Wait for every rank to exit and its output to drain; the first failing rank's status."""
        await self._all_exited.wait()
        await asyncio.gather(*(host.drained() for host in self.hosts))
        return self.first_failure[1] if self.first_failure else 0

    def how_failed(self, rank: int, status: int) -> str:
        """`exit status 3`, `host lost, exit status 255`: how `rank` ended with `status`."""
        return f"{HOST_LOST + ', ' if rank in self.lost_ranks else ''}{failure_text(status)}"

    async def _stop_for_failure(self, rank: int, status: int) -> None:
        """Stop the mesh for the first failure, but not under the ranks paused in pdb as it
        comes: a rank at its breakpoint (attached to or left paused) or one someone examines is
        the state being debugged, and SIGTERM took it away as soon as another rank failed. The
        mesh stops once none of those ranks is paused any more: one that goes on and stops
        again (its next breakpoint) while another still holds the mesh holds it too (it was
        stopped at that breakpoint when the last of the others went on). The post-mortems
        other ranks open as the failure reaches them (a pipeline peer's closed connection) hold
        nothing unless a client is attached to one. The ranks that run, run on meanwhile;
        `stop`, Ctrl-C or SIGTERM end the job at once, as ever."""
        registry = self.server.registry
        held = {session.rank for session in registry.sessions() if _holds_the_mesh(session, rank)}
        if held:
            paused = sorted(held)
            which = f"rank {paused[0]}, paused in pdb, goes" if len(paused) == 1 else \
                f"ranks {', '.join(map(str, paused))}, paused in pdb, go"
            self.on_notice(f"meshdbg: rank {rank} failed ({self.how_failed(rank, status)}); the mesh stops once "
                           f"{which} on (continue or quit there; `stop` ends the job now)")
            async with contextlib.aclosing(registry.watch()) as changes:
                async for _ in changes:  # (every session open, then each change)
                    if self._stopping or not any(session.rank in held and _holds_the_mesh(session, rank)
                                                 for session in registry.sessions()):
                        break
        if not self._stopping:
            await self.stop()

    async def end_unattended_post_mortems(self, wait_s: float) -> None:
        """End every post-mortem that no client has been attached to for `wait_s` seconds, as if
        it was continued: its rank fails as it would have without one, and that failure stops
        the mesh as any does (`run --post-mortem-wait`, for a job with no terminal: its crashed
        rank held the others, and their machines, until someone came, for good). One that a
        client attaches to meanwhile stays while one is attached, and `wait_s` after the last
        one leaves. Runs until cancelled."""
        registry = self.server.registry
        unattended_since: dict[int, float] = {}
        while True:
            now = time.monotonic()
            waiting = {session.id: session for session in registry.sessions()
                       if session.state is State.STOPPED and not session.attached
                       and StopReason.of(session.identity.reason) is StopReason.POST_MORTEM}
            unattended_since = {session_id: unattended_since.get(session_id, now) for session_id in waiting}
            for session_id, since in unattended_since.items():
                if now - since >= wait_s:
                    await self._end_post_mortem(waiting[session_id], wait_s)
                    unattended_since[session_id] = time.monotonic()  # (one that did not end: again after wait_s)
            await asyncio.sleep(UNATTENDED_CHECK_S)

    async def _end_post_mortem(self, session: Session, wait_s: float) -> None:
        """Say so, then continue `session` (bounded: a rank that does not leave it is tried again)."""
        self.on_notice(f"meshdbg: no client came to rank {session.rank}'s post-mortem in {wait_s:g} s; it ends, "
                       f"and the rank fails as without one (--post-mortem-wait 0 waits for good)")
        try:
            await asyncio.wait_for(session.resume(), RELEASE_TIMEOUT_S)
        except (SessionError, TimeoutError) as exc:
            log.warning("rank %d's post-mortem did not end: %s", session.rank, exc)

    async def stop(self, grace: float = STOP_GRACE_S) -> None:
        """Stop every rank still running, on every host: SIGTERM, then SIGKILL after `grace` seconds."""
        self._stopping = True
        log.info("stopping every rank: SIGTERM, then SIGKILL after %g s", grace)
        await asyncio.gather(*(host.stop(grace) for host in self.hosts))

    async def release(self, grace: float = STOP_GRACE_S) -> None:
        """Close every agent stream, which lets actor hosts exit by themselves; then close."""
        for worker in self.workers.values():
            worker.end_stream()
        await within(grace, self._all_exited.wait())  # close() stops the rest
        await self.close()

    async def close(self) -> None:
        """Stop what is left, the hosts and the DebugClient (whatever fails on the way)."""
        try:
            if not self._all_exited.is_set():
                await self.stop()
            for host in self.hosts:
                await host.close()
            await self.placer.close()
        finally:
            await self.server.stop()
