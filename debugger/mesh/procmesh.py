"""ProcMesh: a mesh of worker processes driven from ordinary (synchronous) Python.

    mesh = proc_mesh(hosts=2, gpus=4)               # 8 processes, ranks row-major
    trainers = mesh.spawn("trainer", Trainer, cfg)  # one Trainer per process
    losses = trainers.step.call(batch)              # every rank: MeshResults by rank / coords
    one = trainers.step.call_one(batch, rank=3)     # one rank: its value
    firsts = trainers.slice(hosts=0).step.call(batch)
    mesh.stop()

The launcher (meshdbg.debugger.mesh.launcher) and its DebugClient run on a private event loop thread,
so `breakpoint()` inside an endpoint opens a session that `meshdbg attach` (or the console)
reaches while the driver waits. An endpoint that raises makes the call raise ActorError with
the rank, its coordinates and the remote traceback. Actor classes must be importable by the
workers (defined at the top level of a module, not in __main__).
"""

from __future__ import annotations

import asyncio
import atexit
import sys
import threading
from typing import Any, Callable, Coroutine, Iterator, Mapping, TypeVar

from meshdbg.wire.errors import ActorError, UsageError
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.worker.mesh.actor import class_path, dumps, is_endpoint, loads
from meshdbg.debugger.mesh.launcher import MeshLauncher
from meshdbg.debugger.mesh.shape import CoordSpec, MeshShape

T = TypeVar("T")
Build = Callable[[int], mesh_pb.AgentCommand]  # call id → the command to send
ACTORS_ARGV = ["--actors"]


class _LoopThread:
    """An event loop on a daemon thread, for the launcher and every call made through it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="meshdbg-mesh", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class MeshResults(Mapping[int, Any]):
    """Values by rank (in rank order), with `at(**coords)` to look one up by coordinates."""

    def __init__(self, shape: MeshShape, values: dict[int, Any]) -> None:
        self.shape = shape
        self._values = dict(sorted(values.items()))

    def __getitem__(self, rank: int) -> Any:
        return self._values[rank]

    def __iter__(self) -> Iterator[int]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def at(self, **coords: int) -> Any:
        """The value of the rank at these coordinates, e.g. `results.at(hosts=1, gpus=2)`."""
        ranks = [rank for rank in self.shape.ranks(**coords) if rank in self._values]
        if len(ranks) != 1:
            raise UsageError(f"{coords} names {len(ranks)} ranks of these results, not one")
        return self._values[ranks[0]]

    def __repr__(self) -> str:
        return f"MeshResults({self._values!r})"


class ProcMesh:
    """Worker processes (all of a mesh, or a slice of it) that can host actors."""

    def __init__(self, launcher: MeshLauncher, loop: _LoopThread, ranks: tuple[int, ...]) -> None:
        self._launcher = launcher
        self._loop = loop
        self.ranks = ranks

    @classmethod
    def start(cls, shape: MeshShape, *, name: str = "worker", post_mortem: bool = False,
              env: Mapping[str, str] | None = None) -> "ProcMesh":
        """Launch one worker process per rank of `shape` and wait until all are ready."""
        loop = _LoopThread()
        launcher = MeshLauncher(shape, ACTORS_ARGV, name=name, post_mortem=post_mortem, stop_on_failure=False, env=env,
                                sys_path=list(sys.path))  # workers import actor classes as the driver does

        async def launch() -> None:
            await launcher.start()
            await launcher.wait_ready()

        try:
            loop.run(launch())
        except BaseException:
            loop.run(launcher.close())
            loop.close()
            raise
        mesh = cls(launcher, loop, tuple(range(shape.size)))
        atexit.register(mesh.stop)
        return mesh

    @property
    def shape(self) -> MeshShape:
        return self._launcher.shape

    @property
    def addr(self) -> str:
        """The DebugClient's address (`meshdbg --addr`, or MESHDBG_ADDR with its token)."""
        return self._launcher.server.connection.addr

    def coords(self, rank: int) -> dict[str, int]:
        return self.shape.coords(rank)

    def slice(self, **where: CoordSpec) -> "ProcMesh":
        """The processes whose coordinates match, e.g. `mesh.slice(hosts=0)`."""
        return ProcMesh(self._launcher, self._loop, _restrict(self.shape, self.ranks, where))

    def spawn(self, name: str, cls: type, *args: Any, **kwargs: Any) -> "ActorMesh":
        """Build `cls(*args, **kwargs)` in every process of this mesh, as the actor `name`."""
        path = class_path(cls)
        payload = dumps((args, kwargs))
        self.send_all(self.ranks, lambda call_id: mesh_pb.AgentCommand(spawn=mesh_pb.ActorSpawn(
            call_id=call_id, actor=name, class_path=path, payload=payload)))
        return ActorMesh(self, name, cls, self.ranks)

    def send_all(self, ranks: tuple[int, ...], build: Build) -> MeshResults:
        """Send `build(call_id)` to every rank; results by rank, or ActorError naming the failures."""
        return self._loop.run(self._gather(ranks, build))

    async def _gather(self, ranks: tuple[int, ...], build: Build) -> MeshResults:
        results = await asyncio.gather(*(self._launcher.workers[rank].request(build) for rank in ranks))
        failures = [(rank, r.error) for rank, r in zip(ranks, results) if r.HasField("error")]
        if failures:
            (rank, error), *others = failures
            raise self._actor_error(rank, error, tuple(self._actor_error(r, e) for r, e in others))
        return MeshResults(self.shape, {rank: loads(r.payload) for rank, r in zip(ranks, results)})

    def _actor_error(self, rank: int, error: mesh_pb.RemoteError, others: tuple[ActorError, ...] = ()) -> ActorError:
        return ActorError(rank, self.coords(rank), error.type, error.message, error.traceback, others)

    def stop(self) -> None:
        """Let every worker exit (its actors are dropped), then stop the server. Idempotent."""
        atexit.unregister(self.stop)
        if self._loop.loop.is_closed():
            return
        self._loop.run(self._launcher.release())
        self._loop.close()

    def __enter__(self) -> "ProcMesh":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class ActorMesh:
    """One actor per process of a (slice of a) mesh; `actors.method` is an Endpoint."""

    def __init__(self, mesh: ProcMesh, name: str, cls: type, ranks: tuple[int, ...]) -> None:
        self.mesh = mesh
        self.name = name
        self.cls = cls
        self.ranks = ranks

    def slice(self, **where: CoordSpec) -> "ActorMesh":
        """The actors whose processes' coordinates match, e.g. `trainers.slice(hosts=0)`."""
        return ActorMesh(self.mesh, self.name, self.cls, _restrict(self.mesh.shape, self.ranks, where))

    def __getattr__(self, method: str) -> "Endpoint":
        if not is_endpoint(self.cls, method):
            raise AttributeError(f"{self.cls.__qualname__}.{method} is not an @endpoint")
        return Endpoint(self, method)


class Endpoint:
    """One @endpoint method of an ActorMesh: `call` on every rank, `call_one` on one."""

    def __init__(self, actors: ActorMesh, method: str) -> None:
        self.actors = actors
        self.method = method

    def call(self, *args: Any, **kwargs: Any) -> MeshResults:
        """Run the method on every rank of the actor mesh, concurrently; values by rank."""
        return self._call(self.actors.ranks, args, kwargs)

    def call_one(self, *args: Any, rank: int | None = None, **kwargs: Any) -> Any:
        """Run the method on `rank` (or on the only rank of a one-rank slice); its value."""
        if rank is None:
            if len(self.actors.ranks) != 1:
                raise UsageError(f"call_one needs rank= on a mesh of {len(self.actors.ranks)} ranks")
            rank = self.actors.ranks[0]
        if rank not in self.actors.ranks:
            raise UsageError(f"rank {rank} is not in this actor mesh (ranks {list(self.actors.ranks)})")
        return self._call((rank,), args, kwargs)[rank]

    def _call(self, ranks: tuple[int, ...], args: tuple, kwargs: dict) -> MeshResults:
        payload = dumps((args, kwargs))
        actor, method = self.actors.name, self.method
        return self.actors.mesh.send_all(ranks, lambda call_id: mesh_pb.AgentCommand(call=mesh_pb.ActorCall(
            call_id=call_id, actor=actor, method=method, payload=payload)))


def _restrict(shape: MeshShape, ranks: tuple[int, ...], where: Mapping[str, CoordSpec]) -> tuple[int, ...]:
    chosen = tuple(rank for rank in shape.ranks(**where) if rank in ranks)
    if not chosen:
        raise UsageError(f"the slice {dict(where)} selects no rank")
    return chosen


def proc_mesh(**sizes: int) -> ProcMesh:
    """Launch a mesh with these dimension sizes, e.g. `proc_mesh(hosts=2, gpus=4)`; any names."""
    return ProcMesh.start(MeshShape.of(sizes))
