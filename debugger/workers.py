"""Worker processes as the server sees them through their agent streams (protos/mesh.proto).

Every worker keeps one agent stream open while it lives, so the server knows each rank is
running, stopped (a thread in pdb, seen in the session registry) or exited (with its code or
signal, reported by the launcher that reaped it, or by the worker itself). The agent stream
also carries commands to the worker: an interrupt that stops it in pdb, and actor calls,
each answered by a result matched on its call id. No gRPC here: meshdbg.debugger.mesh_servicer moves
messages between these objects and the wire. The registry is a plain instance.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Awaitable, Callable

from meshdbg.wire.errors import MeshError, NoMatchError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.debugger.format import exit_note
from meshdbg.debugger.hook_processes import HookProcesses, process_key
from meshdbg.debugger.liveness import alive_here, wait_gone
from meshdbg.wire.pending import PendingRequests
from meshdbg.debugger.selection import Selection
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.debugger.sessions import Session
from meshdbg.debugger.views import WorkerView
from meshdbg.wire.coords import identity_coords
from meshdbg.wire.logs import logger
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

log = logger(__name__)
OutsideSampler = Callable[["Worker", bool, float], Awaitable[list[pb.ThreadStack]]]  # (worker, all threads, timeout)


class Worker:
    """One worker process: its identity, its agent stream's outbox and its exit status."""

    def __init__(self, worker_id: int, identity: pb.Identity, launcher: str) -> None:
        self.id = worker_id
        self.identity = identity
        self.launcher = launcher
        self.exit_code: int | None = None
        self.signal: int | None = None
        self.host_lost = False  # it ended with its host (a multi-host run lost that host's agent)
        self.outbox: asyncio.Queue[mesh_pb.AgentCommand | None] | None = None  # while connected
        self.connected = asyncio.Event()
        self.gone = asyncio.Event()  # exited, or its agent stream ended
        self.end_announced = False  # watchers were told it ended
        self.reaped_here = False  # launched by this server's launcher, which reports its exit
        self._calls: PendingRequests[mesh_pb.ActorResult] = PendingRequests()
        self._samples: PendingRequests[pb.SampledStacks] = PendingRequests()
        self._pipeline: PendingRequests[pb.PipelineReport] = PendingRequests()

    @property
    def rank(self) -> int:
        return self.identity.rank

    @property
    def pid(self) -> int:
        return self.identity.pid

    @property
    def coords(self) -> dict[str, int]:
        return identity_coords(self.identity)

    @property
    def exited(self) -> bool:
        """It said how it ends (its exit code), or is gone: reaped, or its agent stream ended.

        (A reaped worker always has `gone` set, with its code or signal; a disconnected one
        is never connected again, since WorkerRegistry.connect skips exited workers.)
        """
        return self.exit_code is not None or self.gone.is_set()

    def send(self, command: mesh_pb.AgentCommand) -> None:
        """Queue a command on the agent stream; MeshError when the worker is not connected."""
        if self.outbox is None:
            raise MeshError(f"rank {self.rank} (pid {self.pid}) has no agent stream{self._status()}")
        self.outbox.put_nowait(command)

    async def request(self, build: Callable[[int], mesh_pb.AgentCommand]) -> mesh_pb.ActorResult:
        """Send the actor spawn/call `build(call_id)` and wait for its result; MeshError if the
        worker goes first."""
        return await self._calls.request(lambda call_id: self.send(build(call_id)))

    def on_result(self, result: mesh_pb.ActorResult) -> None:
        self._calls.answer(result.call_id, result)

    async def sample(self, all_threads: bool) -> pb.SampledStacks:
        """The worker's stacks, taken by its agent thread; MeshError if it goes first. Waits as
        long as the worker takes: the caller bounds it (a rank holding the GIL cannot answer)."""
        return await self._samples.request(lambda request_id: self.send(mesh_pb.AgentCommand(
            sample=pb.SampleRequest(request_id=request_id, all_threads=all_threads))))

    def on_stacks(self, stacks: pb.SampledStacks) -> None:
        self._samples.answer(stacks.request_id, stacks)

    async def pipeline(self, request: pb.PipelineRequest) -> pb.PipelineReport:
        """Where the worker's pipeline runtime stands, its action breakpoints changed first as
        `request` asks; answered by its agent thread, as `sample`. MeshError if it goes first."""
        def send(request_id: int) -> None:
            asked = pb.PipelineRequest()
            asked.CopyFrom(request)
            asked.request_id = request_id
            self.send(mesh_pb.AgentCommand(pipeline=asked))

        return await self._pipeline.request(send)

    def on_pipeline(self, report: pb.PipelineReport) -> None:
        self._pipeline.answer(report.request_id, report)

    def end_stream(self) -> None:
        """Close the agent stream from the server's side (an actor host then exits)."""
        if self.outbox is not None:
            self.outbox.put_nowait(None)

    def on_connect(self) -> None:
        """Its agent stream opened (again, after a break: every kind of request starts afresh,
        since the break closed them all)."""
        self.outbox = asyncio.Queue()
        self.gone.clear()
        self.end_announced = False
        self._calls, self._samples, self._pipeline = PendingRequests(), PendingRequests(), PendingRequests()
        self.connected.set()

    def on_disconnect(self) -> None:
        """The agent stream ended: fail every call still waiting for this worker."""
        self.outbox = None
        self.gone.set()
        gone = MeshError(f"rank {self.rank} went away before answering{self._status()}")
        self._calls.close(error=gone)
        self._samples.close(error=gone)
        self._pipeline.close(error=gone)

    def _status(self) -> str:
        if self.signal is not None:
            return f" (killed by signal {self.signal})"
        if self.exit_code is not None:
            return f" (exited with code {self.exit_code})"
        return ""


class WorkerRegistry:
    """Every worker known to this server, launched here or connected from elsewhere."""

    def __init__(self, sessions: SessionRegistry) -> None:
        self.sessions = sessions
        self._workers: dict[int, Worker] = {}
        self._by_pid: dict[int, list[Worker]] = {}  # oldest first (pids of other hosts may clash)
        self._ids = itertools.count(1)
        self._collectives_timeout = 0.0  # while a rank is paused: what every worker's process groups get
        self.outside: OutsideSampler | None = None  # a launcher's: py-spy a worker on the host that forked it
        self.hooked = HookProcesses()  # processes with no agent stream, known by their parked session streams

    def launched(self, identity: pb.Identity) -> Worker:
        """A process this server's launcher started: listed as starting until it connects.

        Its agent stream may have opened already: the launcher learns a rank's pid from its
        host (the fork server's reply, or a remote agent's report) while the rank dials this
        server by itself, and under load the rank can win. That worker, connected and live,
        is the one launched; a second one for the same process would never connect, and the
        launcher waiting for it (`wait_ready`) would wait for ever.
        """
        worker = next((w for w in self._of_process(identity) if not w.reaped_here and not w.exited), None)
        if worker is None:
            worker = self._add(Worker(next(self._ids), identity, "meshdbg"))
        worker.reaped_here = True
        return worker

    def connect(self, hello: mesh_pb.AgentHello) -> Worker:
        """An agent stream opened: the launched (or earlier connected, still unfinished) worker
        with that pid and host, else a new one."""
        ident = hello.identity
        worker = next((w for w in self._of_process(ident) if w.exit_code is None and w.signal is None),
                      None)  # a stream that broke comes back
        if worker is None:
            worker = self._add(Worker(next(self._ids), ident, hello.launcher))
        else:
            worker.identity, worker.launcher = ident, hello.launcher or worker.launcher
        worker.on_connect()
        if self._collectives_timeout:
            worker.send(_collectives(self._collectives_timeout))
        self.sessions.publish_worker(WatchKind.JOINED, self.info(worker))
        return worker

    def _of_process(self, identity: pb.Identity) -> list[Worker]:
        """The workers known with the pid and host of `identity`, oldest first (an empty
        hostname matches any: pids of other hosts may clash, so each names its own)."""
        return [w for w in self._by_pid.get(identity.pid, ()) if w.identity.hostname in ("", identity.hostname)]

    def _add(self, worker: Worker) -> Worker:
        self._workers[worker.id] = worker
        self._by_pid.setdefault(worker.pid, []).append(worker)
        return worker

    def record_exit(self, worker: Worker, exit_code: int | None, signal: int | None, host_lost: bool = False) -> None:
        """The launcher learnt how `worker` ended (from its host agent; or that its host was
        lost): so did its sessions. (A lost host's stayed "not answering" for the reconnect
        window, and `continue` named them as paused ranks it could not resume.)"""
        worker.exit_code, worker.signal, worker.host_lost = exit_code, signal, host_lost
        worker.gone.set()
        self.ended(worker)
        note = exit_note(WorkerView.from_pb(self.info(worker)))
        for session in self.sessions.all_of_process(worker.identity.hostname, worker.pid):
            session.gone = note
            session.on_end("", EndReason.WORKER_GONE)

    def disconnected(self, worker: Worker) -> None:
        """A worker's agent stream ended; one started elsewhere has ended with it (one launched
        here ends when the launcher reaps it, with its status), unless its process is still
        there on this host: then it is "not answering" until it is gone."""
        worker.on_disconnect()
        if worker.reaped_here:
            return
        if not alive_here(worker.identity):
            self.ended(worker)
            return
        self._once_gone(worker.identity, lambda: self.ended(worker))

    def _once_gone(self, identity: pb.Identity, then: Callable[[], None]) -> None:
        """`then()` once the process of `identity`, on this host, is gone (not if the server
        stops first)."""
        task = asyncio.create_task(wait_gone(identity))

        def gone(done: asyncio.Task[None]) -> None:
            if not done.cancelled():
                then()

        task.add_done_callback(gone)
        self.sessions.tasks.add(task)
        task.add_done_callback(self.sessions.tasks.discard)

    def ended(self, worker: Worker) -> None:
        """Announce a worker's end to watchers, once."""
        if not worker.end_announced:
            worker.end_announced = True
            info = self.info(worker)
            log.info("worker %d (pid %d): %s", worker.id, worker.pid, exit_note(WorkerView.from_pb(info)))
            self.sessions.publish_worker(WatchKind.EXITED, info)

    def workers(self) -> list[Worker]:
        """Every worker by rank, then name, then pid."""
        return sorted(self._workers.values(), key=lambda w: (w.rank, w.identity.name, w.pid))

    def select(self, selection: Selection) -> list[Worker]:
        return [w for w in self.workers() if selection.matches(w.rank, w.coords)]

    def no_match(self, selection: Selection) -> NoMatchError:
        """The error when `selection` matched no rank, naming a dimension no worker or session has."""
        return selection.no_match("no rank matches", [*self._workers.values(), *self.sessions.sessions()])

    def state(self, worker: Worker) -> State:
        return _state(worker, self._session_of(worker))

    def _session_of(self, worker: Worker) -> Session | None:
        """The first session opened by this worker's process while it lives (it is in pdb)."""
        if worker.exited:
            return None
        return self.sessions.of_process(worker.identity.hostname, worker.pid)

    def info(self, worker: Worker) -> pb.WorkerInfo:
        """The wire view; `identity.reason` is why it is stopped (empty when it is not)."""
        session = self._session_of(worker)
        return _info(worker.identity, _state(worker, session), session, launcher=worker.launcher,
                     exit_code=worker.exit_code, signal=worker.signal, host_lost=worker.host_lost)

    def infos(self) -> list[pb.WorkerInfo]:
        """`list --all`: every worker with an agent stream, and each process known only by its
        session streams (meshdbg.debugger.hook_processes; no launcher): in pdb, as its first
        session stands, running, or exited; by rank, name and pid."""
        infos = [self.info(w) for w in self.workers()]
        listed = {process_key(w.identity) for w in self._workers.values()}
        for session in self.sessions.sessions():  # (in order: a process's first comes first)
            if process_key(session.identity) not in listed:
                listed.add(process_key(session.identity))
                infos.append(_info(session.identity, session.state, session))
        for identities, state in ((self.hooked.running(), State.RUNNING), (self.hooked.exited(), State.EXITED)):
            for identity in identities:
                if process_key(identity) not in listed:
                    listed.add(process_key(identity))
                    infos.append(_info(identity, state, None))
        return sorted(infos, key=lambda info: (info.identity.rank, info.identity.name, info.identity.pid))

    def registered(self, identity: pb.Identity) -> bool:
        """Whether the process of `identity` is a worker here (it has, or had, an agent stream)."""
        return bool(self._of_process(identity))

    def hook_stream_left(self, identity: pb.Identity, stopped: bool) -> None:
        """A parked session stream of a process with no agent stream stopped waiting: its next
        stop took it (`stopped`), or it ended (the process closes them at its exit, a kill
        breaks them, and so does a lost connection or a SIGSTOP, which the server's keepalive
        cuts). A process on this host runs until it is gone; of one elsewhere, nothing tells
        an exit from a lost stream: it has exited (and is back at its next stop). Watchers hear
        of the exit once nothing holds the process and it has no session left."""
        if stopped or self.sessions.closing:
            self.hooked.release(identity, exited=False)
        elif not alive_here(identity):
            self._hook_released(identity)
        else:
            log.info("rank %d (pid %d), with no agent stream: a parked session stream ended, the process is still "
                     "here (exiting, stopped, or its connection lost); running until it is gone",
                     identity.rank, identity.pid)
            self._hook_watched(identity)
            self.hooked.release(identity, exited=False)  # (the watch holds it now)

    def hook_runs_unparked(self, identity: pb.Identity) -> None:
        """A session of a process with no agent stream ended with the process running on and no
        stream parked for its next stop (it asked for none, or the server had no room): on this
        host a watch of its pid holds it running until it is gone; of one elsewhere nothing
        more is known until it stops again."""
        if not self.sessions.closing and alive_here(identity):
            self._hook_watched(identity)

    def _hook_watched(self, identity: pb.Identity) -> None:
        """The pid of a process with no agent stream, on this host, watched until it is gone (one
        watch a process)."""
        if self.hooked.watch(identity):
            self._once_gone(identity, lambda: self._hook_released(identity))

    def _hook_released(self, identity: pb.Identity) -> None:
        """One hold of a process with no agent stream is over with its process: its exit, to
        watchers, once that was the last and no session of it is left, and the rank runs in no
        other process (the children of a rank's pool or `mp.spawn`, each that rank too, end
        before it: not the rank's end)."""
        if self.hooked.release(identity, exited=True) and self.sessions.of_process(identity.hostname, identity.pid) is None \
                and not self._rank_lives_elsewhere(identity):
            info = _info(identity, State.EXITED, None)
            log.info("rank %d (pid %d), with no agent stream: %s", identity.rank, identity.pid,
                     exit_note(WorkerView.from_pb(info)))
            self.sessions.publish_worker(WatchKind.EXITED, info)

    def _rank_lives_elsewhere(self, identity: pb.Identity) -> bool:
        """Whether the rank of `identity` has a live process other than that one: a worker whose
        end is not told yet (one whose agent stream just ended may still be exiting), a session,
        or a process with no agent stream held running."""
        rank, process = (identity.name, identity.rank), process_key(identity)
        return (any((w.identity.name, w.rank) == rank and not w.end_announced for w in self._workers.values())
                or any((s.name, s.rank) == rank and process_key(s.identity) != process for s in self.sessions.sessions())
                or self.hooked.runs_another_of(identity))

    def set_collectives_timeout(self, seconds: float) -> None:
        """Tell every connected worker (and each one that connects later) to give its
        torch.distributed process groups this timeout; 0 restores their own (see
        meshdbg.debugger.collectives). Sent only when it changes."""
        if seconds == self._collectives_timeout:
            return
        self._collectives_timeout = seconds
        for worker in self._workers.values():
            if worker.outbox is not None:
                worker.send(_collectives(seconds))

    def interrupt(self, selection: Selection) -> list[int]:
        """Ask every selected running worker with no session to stop in pdb; the ranks asked.
        (A session that runs a command is broken into through the session itself.)"""
        chosen = [w for w in self.select(selection)
                  if self._session_of(w) is None and _state(w, None) is State.RUNNING]
        for worker in chosen:
            worker.send(mesh_pb.AgentCommand(interrupt=mesh_pb.AgentInterrupt()))
        return [w.rank for w in chosen]


def _collectives(seconds: float) -> mesh_pb.AgentCommand:
    return mesh_pb.AgentCommand(collectives_timeout=mesh_pb.CollectivesTimeout(timeout_s=seconds))


def _info(identity: pb.Identity, state: State, session: Session | None, launcher: str = "",
          exit_code: int | None = None, signal: int | None = None, host_lost: bool = False) -> pb.WorkerInfo:
    """A process's wire view, in `state`; with its first live `session`, where and why it is
    stopped (`identity.reason` empty when it is not); no launcher: one with no agent stream."""
    shown = pb.Identity()
    shown.CopyFrom(identity)
    if session is not None:
        shown.reason = session.identity.reason
    else:
        shown.ClearField("reason")
    return pb.WorkerInfo(identity=shown, state=state.pb, launcher=launcher, exit_code=exit_code, signal=signal,
                         frame=session.frame if session is not None else None, host_lost=host_lost)


def _state(worker: Worker, session: Session | None) -> State:
    """A worker's state, given its first live session (WorkerRegistry._session_of): that
    session's own state, so a worker is `stopped` only once pdb has shown its prompt (and
    its position is known), and `running` again while the session runs a command."""
    if worker.exited:
        silent = worker.exit_code is None and worker.signal is None and alive_here(worker.identity)  # its agent stream broke, it lives
        return State.NOT_ANSWERING if silent else State.EXITED
    if session is not None:
        return session.state
    return State.RUNNING if worker.outbox is not None else State.STARTING
