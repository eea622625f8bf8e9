"""`meshdbg host --join URL`: a host agent that serves a multi-host `run` over one gRPC stream.

    agent → run   hello (who it is) · digest (of the script the welcome named) · spawned ·
                  output (prefixed lines, ≤ 32 KiB a message, each with its rank and whether
                  the rank's session showed them) · exit
    run → agent   welcome (the target) · assignment (its HostPlan) · stop ·
                  sample (py-spy a rank stuck in C, answered with `stacks`) ·
                  flush (a rank's output so far sent on, answered with `flushed` after it)

The stream is the agent's lifeline, both ways: when it breaks (the run was killed, which
closes its socket) the agent SIGTERMs its ranks, SIGKILLs what is left after LOST_GRACE_S and
exits, so no rank outlives its job. A run that only went silent (a loaded machine, a stall,
SIGSTOP) is not a dead one: the agent waits for its pings' answer for the reconnect window
(MESHDBG_RECONNECT_S, 60 s), as a paused worker waits for its server, before it gives the
run up; the run itself marks a silent host lost within ~4 s. Before, a run stalled for 4 s
lost every host and their paused ranks with them. Output is bounded: past
OUTPUT_BACKLOG bytes queued, every rank's pipe is paused until the stream catches up.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
from typing import Any, AsyncIterator, Coroutine, Mapping

import grpc

from meshdbg.host.agent import HostAgent, reserve_port
from meshdbg.host.identity import hello, script_digest
from meshdbg.host.plan import HostPlan
from meshdbg.host.pyspy import PySpyError, py_spy_stacks
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.handshake import handshake
from meshdbg.wire.environment import RECONNECT_S
from meshdbg.wire.keepalive import client_keepalive
from meshdbg.wire.logs import logger, said
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from meshdbg.wire.status import error_from_rpc
from meshdbg.wire.tls import channel_credentials
from meshdbg.worker.notices import setting

log = logger(__name__)
CHUNK = 32 * 1024
OUTPUT_BACKLOG = 1 << 20
LOST_GRACE_S = 1.5  # the run is gone: SIGTERM, then SIGKILL after this, well within 5 s
INTERRUPTED = 130
TORCHRUN_PREFIX = "TORCHELASTIC_"


def placer_free(env: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment without what the engine that placed the agent (torchrun) gave
    the agent as its own worker: the ranks get the run's RANK, MASTER_ADDR, ... and must not
    find torchrun's agent store (TORCHELASTIC_USE_AGENT_STORE) instead of host 0's."""
    return {name: value for name, value in env.items() if not name.startswith(TORCHRUN_PREFIX)}


class Uplink:
    """The messages for the run, in order, with the output backlog bounded (a Flow)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[host_pb.HostMessage | None] = asyncio.Queue()
        self._backlog = 0
        self._paused = False
        self._pipes: set[asyncio.ReadTransport] = set()

    def send(self, message: host_pb.HostMessage) -> None:
        self.queue.put_nowait(message)

    def output(self, rank: int, stream: int, text: str, shown: bool) -> None:
        """A batch of `rank`'s prefixed lines (a LineSink, meshdbg.host.output), in chunks."""
        data = text.encode()
        for start in range(0, len(data), CHUNK):
            piece = data[start:start + CHUNK]
            self._backlog += len(piece)
            self.send(host_pb.HostMessage(output=host_pb.HostOutput(stream=stream, text=piece, rank=rank, shown=shown)))
        if self._backlog > OUTPUT_BACKLOG and not self._paused:
            self._paused = True
            for pipe in self._pipes:
                pipe.pause_reading()

    def watch(self, transport: asyncio.ReadTransport) -> None:
        self._pipes.add(transport)
        if self._paused:
            transport.pause_reading()

    def forget(self, transport: asyncio.ReadTransport) -> None:
        self._pipes.discard(transport)

    async def messages(self) -> AsyncIterator[host_pb.HostMessage]:
        while (message := await self.queue.get()) is not None:
            if message.HasField("output"):
                self._backlog -= len(message.output.text)
                if self._paused and self._backlog < OUTPUT_BACKLOG // 2:
                    self._paused = False
                    for pipe in self._pipes:
                        pipe.resume_reading()
            yield message

    def close(self) -> None:
        self.queue.put_nowait(None)


class RemoteAgent:
    """A HostAgent whose plan comes from, and whose events go to, the run at the other end."""

    def __init__(self, connection: ConnectionInfo, index: int | None) -> None:
        self.connection = connection
        self.index = index
        self.uplink = Uplink()
        self.agent = HostAgent(self, env=placer_free(os.environ), flow=self.uplink,
                               sinks=lambda rank, stream: functools.partial(self.uplink.output, rank, stream))
        self._ranks = 0
        self._exits = 0
        self.finished = asyncio.Event()  # every rank of the plan has exited
        self.plan: HostPlan | None = None
        self.interrupted = False
        self._tasks: set[asyncio.Task[None]] = set()  # what a command started, held until it is done

    def interrupt(self) -> None:
        """SIGINT or SIGTERM to the agent: leave the run if not placed yet, else end our ranks
        (the run then sees them exit, and the stream end, as for any job that stops)."""
        self.interrupted = True
        log.info("interrupted: %s", "leaving the run" if self.plan is None else "stopping this host's ranks")
        if self.plan is None:
            self.uplink.close()
        else:
            self._start(self.agent.stop(LOST_GRACE_S))

    def spawned(self, rank: int, pid: int) -> None:
        self.uplink.send(host_pb.HostMessage(spawned=host_pb.HostSpawned(rank=rank, pid=pid)))

    def exited(self, rank: int, code: int) -> None:
        self.uplink.send(host_pb.HostMessage(exit=host_pb.HostExit(rank=rank, code=code)))
        self._exits += 1
        if self._exits == self._ranks:
            self.finished.set()

    async def run(self) -> int:
        """Join the run and serve it until the job ends here; the exit status of this agent."""
        addr = self.connection.addr
        credentials = await asyncio.to_thread(channel_credentials, addr, self.connection.fingerprint)
        keepalive = client_keepalive(int(setting(RECONNECT_S) * 1000))  # a silent run is not a dead one
        channel = (grpc.aio.secure_channel(addr, credentials, options=keepalive) if credentials
                   else grpc.aio.insecure_channel(addr, options=keepalive))
        port = reserve_port()
        self.agent.prepare()
        try:
            self.uplink.send(host_pb.HostMessage(hello=hello(addr, self.index, port.getsockname()[1])))
            log.info("joining the run at %s (index hint %s)", addr, self.index)
            await handshake(channel, self.connection)  # a wrong token refused on Join itself may read as INTERNAL
            call = host_grpc.HostsStub(channel).Join(self.uplink.messages(), metadata=self.connection.metadata())
            finishing = asyncio.create_task(self._finish_when_done())
            try:
                async for command in call:
                    await self._obey(command)
            except grpc.RpcError as exc:
                if self.plan is None and not self.interrupted:  # refused, or never reached
                    raise error_from_rpc(exc, addr) from None
                log.warning("the run's stream broke: %s", error_from_rpc(exc, addr))
                said(log, f"meshdbg host: lost the run at {addr}; stopping this host's ranks", logging.WARNING)
                return 1
            finally:
                finishing.cancel()
                if self.agent.running:
                    await self.agent.stop(LOST_GRACE_S)
            return INTERRUPTED if self.interrupted else 0
        finally:
            await self.agent.close()
            port.close()
            await channel.close(grace=None)

    async def _obey(self, command: host_pb.HostCommand) -> None:
        kind = command.WhichOneof("kind")
        if kind == "welcome":
            digest = script_digest(list(command.welcome.argv), command.welcome.cwd)
            self.uplink.send(host_pb.HostMessage(digest=host_pb.HostDigest(script_digest=digest)))
        elif kind == "assignment":
            self.plan = HostPlan.from_pb(command.assignment)
            self._ranks = len(self.plan.ranks)
            ranks = [r.rank for r in self.plan.ranks]
            which = "no ranks" if not ranks else f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks[0]}-{ranks[-1]}"
            said(log, f"meshdbg host: host {self.plan.index}, {which}")
            if not self.plan.ranks:
                self.finished.set()
            await self.agent.start(self.plan)
        elif kind == "stop":
            log.info("the run stops this host's ranks (grace %g s)", command.stop.grace_s)
            self._start(self.agent.stop(command.stop.grace_s))
        elif kind == "sample":
            self._start(self._sample(command.sample))
        elif kind == "flush":
            self._start(self._flush(command.flush))

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` beside the stream, held until done (the loop keeps only a weak reference
        to a task: one nobody holds may be collected before it answers)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _sample(self, request: host_pb.HostSample) -> None:
        """py-spy one of our ranks for the run (it could not answer from inside)."""
        answer = host_pb.HostStacks(request_id=request.request_id)
        try:
            answer.threads.extend(await py_spy_stacks(request.pid, request.all_threads, request.timeout_s))
        except PySpyError as exc:
            answer.error = str(exc)
        self.uplink.send(host_pb.HostMessage(stacks=answer))

    async def _flush(self, request: host_pb.HostFlush) -> None:
        """Send on what the rank wrote so far, then say so (after it, on the same stream)."""
        await self.agent.flushed(request.rank)
        self.uplink.send(host_pb.HostMessage(flushed=host_pb.HostFlushed(request_id=request.request_id)))

    async def _finish_when_done(self) -> None:
        """Once every rank has exited and its output is sent, end our side of the stream."""
        await self.finished.wait()
        await self.agent.drained()
        self.uplink.close()


async def serve(connection: ConnectionInfo, index: int | None) -> int:
    """Run one agent until its job ends; SIGINT/SIGTERM to the agent stop its ranks first."""
    agent = RemoteAgent(connection, index)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, agent.interrupt)
    return await agent.run()
