"""The mesh launcher: a DebugClient plus one worker process per rank, and their lifecycle.

    launcher = MeshLauncher(MeshShape.parse("hosts=2,gpus=4"), ["train.py", "--lr", "3e-4"])
    await launcher.start()            # server, fork server, every rank spawned
    await launcher.wait_ready()       # every rank registered its agent stream
    status = await launcher.wait()    # the first failing rank's status (0 when all succeed)
    await launcher.close()

Each rank gets the environment of meshdbg.debugger.mesh.shape.rank_env, its output prefixed line by
line (meshdbg.debugger.mesh.output), and runs meshdbg.worker.mesh.bootstrap. By default the first failing rank
stops the whole mesh (SIGTERM, then SIGKILL after a grace period). The exit status of a rank
killed by a signal is 128 + the signal, as in a shell. Async: it runs on one event loop, the
CLI's (`meshdbg run`) or the background loop of a ProcMesh.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from typing import Callable, Mapping

from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.debugger.certificates import ServerCertificate
from meshdbg.debugger.service import DebugClient
from meshdbg.debugger.workers import Worker
from meshdbg.wire.coords import format_coords, pb_coords
from meshdbg.wire.shown_marks import MARKS_ENV
from meshdbg.debugger.mesh.output import PrefixedLines, pipe_to, stderr, stdout
from meshdbg.debugger.mesh.shape import MeshShape, rank_env
from meshdbg.debugger.mesh.spawner import ForkServer

STOP_GRACE_S = 3.0
DRAIN_TIMEOUT_S = 2.0
MASTER_ADDR = "127.0.0.1"


def reserve_port(host: str = MASTER_ADDR) -> socket.socket:
    """A socket bound to a port the OS picked, kept (not listening) for the mesh's lifetime.

    Holding it stops anyone else from being given the port; SO_REUSEADDR on both sides lets
    rank 0's torch.distributed store bind it as MASTER_PORT.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    return sock


def status_of(code: int) -> int:
    """A process's exit status as a shell reports it: 128 + signal when killed by one."""
    return 128 - code if code < 0 else code


class MeshLauncher:
    """Starts and stops one mesh of worker processes around its own DebugClient."""

    def __init__(self, shape: MeshShape, argv: list[str], *, name: str = "worker", post_mortem: bool = True,
                 stop_on_failure: bool = True, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 publish: bool = True, sys_path: list[str] | None = None, tls: ServerCertificate | None = None) -> None:
        self.shape = shape
        self.argv = list(argv)
        self.name = name
        self.post_mortem = post_mortem
        self.stop_on_failure = stop_on_failure
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd or os.getcwd()
        self.sys_path = sys_path  # the workers' sys.path (None: the bootstrap sets it as python does)
        self.server = DebugClient(publish=publish, what=" ".join(["run", *self.argv])[:200], tls=tls)
        self.workers: dict[int, Worker] = {}  # by rank
        self.exits: dict[int, int] = {}  # rank → status, in the order they exited
        self.first_failure: tuple[int, int] | None = None  # (rank, status)
        self.started_at = time.monotonic()
        self._pids: dict[int, int] = {}  # pid → rank, while running
        self._early_exits: dict[int, int] = {}  # pid → code, reported before its spawn returned
        self._pumps: list[PrefixedLines] = []
        self.shown: Callable[[int], bool] = lambda rank: False  # a console here shows this rank's session
        self._all_exited = asyncio.Event()  # every rank has exited
        self._none_running = asyncio.Event()  # no spawned rank is running (also before the first spawn)
        self._none_running.set()
        self._stopping = False
        self._port: socket.socket | None = None
        self._forks: ForkServer | None = None

    @property
    def size(self) -> int:
        return self.shape.size

    async def start(self) -> None:
        """Start the fork server and the DebugClient, then spawn every rank."""
        self._forks = ForkServer.start(self._on_exit)
        connection = await self.server.start()
        self._port = reserve_port()
        await asyncio.gather(*(self._spawn(rank, connection) for rank in range(self.size)))

    async def _spawn(self, rank: int, connection: ConnectionInfo) -> None:
        env = dict(self.env, **rank_env(self.shape, rank, name=self.name, addr=connection.addr, token=connection.token,
                                        master_addr=MASTER_ADDR, master_port=self._port.getsockname()[1],
                                        fingerprint=connection.fingerprint),
                   MESHDBG_POST_MORTEM="1" if self.post_mortem else "0", **{MARKS_ENV: "1"})
        prefix = f"[r{rank} {format_coords(self.shape.coords(rank))}] "
        out_fd, out_pump = await pipe_to(prefix, stdout, lambda: self.shown(rank))
        err_fd, err_pump = await pipe_to(prefix, stderr, lambda: self.shown(rank))
        self._pumps += [out_pump, err_pump]
        pid = await self._forks.spawn(env, self.argv, self.cwd, out_fd, err_fd, self.sys_path)
        self._pids[pid] = rank
        self._none_running.clear()
        self.workers[rank] = self.server.workers.launched(pb.Identity(
            name=self.name, rank=rank, hostname=socket.gethostname(), pid=pid,
            coords=pb_coords(self.shape.coords(rank))))
        if pid in self._early_exits:  # it exited before this coroutine resumed
            self._on_exit(pid, self._early_exits.pop(pid))

    async def wait_ready(self) -> float:
        """Wait until every rank has registered (or already exited); seconds since construction."""
        await asyncio.gather(*(self._ready(worker) for worker in self.workers.values()))
        return time.monotonic() - self.started_at

    @staticmethod
    async def _ready(worker: Worker) -> None:
        connected = asyncio.ensure_future(worker.connected.wait())
        gone = asyncio.ensure_future(worker.gone.wait())
        await asyncio.wait([connected, gone], return_when=asyncio.FIRST_COMPLETED)
        connected.cancel()
        gone.cancel()

    def _on_exit(self, pid: int, code: int) -> None:
        rank = self._pids.pop(pid, None)
        if rank is None:
            self._early_exits[pid] = code
            return
        self.exits[rank] = status = status_of(code)
        self.server.workers.exited(pid, code if code >= 0 else None, -code if code < 0 else None)
        if not self._pids:
            self._none_running.set()
        if status != 0 and self.first_failure is None and not self._stopping:
            self.first_failure = (rank, status)
            if self.stop_on_failure:
                asyncio.get_running_loop().create_task(self.stop())
        if len(self.exits) == self.size:
            self._all_exited.set()

    async def wait(self) -> int:
        """Wait for every rank to exit and its output to drain; the first failing rank's status."""
        await self._all_exited.wait()
        await asyncio.wait([pump.closed for pump in self._pumps], timeout=DRAIN_TIMEOUT_S)
        return self.first_failure[1] if self.first_failure else 0

    async def stop(self, grace: float = STOP_GRACE_S) -> None:
        """Stop every rank still running: SIGTERM, then SIGKILL after `grace` seconds.

        Gives up after another `grace` seconds rather than raise: close() still has to stop
        the fork server (which kills what is left) and the DebugClient.
        """
        self._stopping = True
        for signum in (signal.SIGTERM, signal.SIGKILL):
            self._signal_all(signum)
            if await self._none_running_within(grace):
                return

    async def _none_running_within(self, timeout: float) -> bool:
        """Whether every spawned rank has exited within `timeout` seconds."""
        waiter = asyncio.ensure_future(self._none_running.wait())
        done, _ = await asyncio.wait([waiter], timeout=timeout)
        waiter.cancel()
        return bool(done)

    def _signal_all(self, signum: int) -> None:
        """Signal each running rank's process group (meshdbg.worker.mesh.zygote), so what a
        rank started stops with it."""
        for pid in list(self._pids):
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass  # exited; the fork server is about to report it

    async def release(self, grace: float = STOP_GRACE_S) -> None:
        """Close every agent stream, which lets actor hosts exit by themselves; then close."""
        for worker in self.workers.values():
            worker.end_stream()
        await self._none_running_within(grace)  # close() stops the rest
        await self.close()

    async def close(self) -> None:
        """Stop what is left, the fork server and the DebugClient (whatever fails on the way)."""
        try:
            if self._pids:
                await self.stop()
            if self._forks is not None:
                self._forks.close()
                try:
                    await asyncio.wait_for(asyncio.to_thread(self._forks.process.wait), STOP_GRACE_S)
                except asyncio.TimeoutError:
                    self._forks.kill()
        finally:
            if self._port is not None:
                self._port.close()
            await self.server.stop()
