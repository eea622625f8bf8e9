"""`--on join`: hosts whose `meshdbg host` agents dial the run, and the run's side of each.

`JoinPlacer.place` prints the join line and waits for the mesh's H agents (`--wait-hosts`);
`join` serves one agent's stream (meshdbg.debugger.mesh.joining hands it over): it refuses a
late, duplicate or wrong-version agent with a one-line reason, welcomes the others, and from
then on a `RemoteHost` relays between the launcher and that agent. A stream that breaks
(the agent or its host died, or keepalive found the network parted, ~4 s) loses the host:
its ranks are marked exited with reason `host lost`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, AsyncIterator

import grpc

from meshdbg.host.plan import HostPlan
from meshdbg.host.pyspy import PySpyError
from meshdbg.wire.pending import PendingRequests
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.errors import UsageError
from meshdbg.wire.logs import logger, said
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.racing import within
from meshdbg.wire.vocabulary import HostState
from meshdbg.debugger.sanitize import printable
from meshdbg.debugger.selection import ranks_text
from meshdbg.debugger.servicer import first_message
from meshdbg.debugger.mesh.placement import order_hosts
from meshdbg.host.agent import DRAIN_TIMEOUT_S, until_quiet
from meshdbg.host.output import Stream, to_terminal

if TYPE_CHECKING:
    from meshdbg.debugger.mesh.launcher import MeshLauncher

log = logger(__name__)
JOIN = "a host agent's stream"
SAMPLE_TRIP_S = 0.3  # what a py-spy request to another host may take beyond py-spy itself


def peer_ip(peer: str) -> str:
    """`ipv4:198.18.0.2:40000` or `ipv6:[::1]:40000` → the address alone."""
    address = peer.partition(":")[2]
    return address.rpartition(":")[0].strip("[]") or address


class RemoteHost:
    """One joined agent, as the launcher drives it (the Host interface)."""

    def __init__(self, launcher: "MeshLauncher", hello: host_pb.HostHello, address: str) -> None:
        self.launcher = launcher
        self.hello = hello
        self.index = -1  # until placed
        self.hostname = printable(hello.hostname)  # shown on terminals: no escape sequences of the agent's
        self.address = address
        self.master_addr = hello.addresses[0] if hello.addresses else address
        self.master_port = hello.master_port
        self.hint = hello.index_hint if hello.HasField("index_hint") else None
        self.digest = ""  # sha256:<hex> of the script as the host has it
        self.ranks: list[int] = []
        self.state = HostState.JOINING
        self.outbox: asyncio.Queue[host_pb.HostCommand | None] = asyncio.Queue()
        self.ended = asyncio.Event()  # its stream is over
        self._running: set[int] = set()
        self._exited: set[int] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._samples: PendingRequests[host_pb.HostStacks] = PendingRequests()
        self._flushes: PendingRequests[None] = PendingRequests()
        self._output_bytes = 0
        self._partial: dict[int, bytes] = {}  # by stream: the start of a line whose end is in the next chunk
        self._sinks = launcher.output.sinks(to_terminal(launcher.shown))

    def __str__(self) -> str:
        return f"{self.hostname} ({self.address})"

    async def start(self, plan: HostPlan) -> None:
        self.ranks = [r.rank for r in plan.ranks]
        self.state = HostState.UP
        self.outbox.put_nowait(host_pb.HostCommand(assignment=plan.to_pb()))

    async def stop(self, grace: float) -> None:
        """The agent SIGTERMs its ranks, SIGKILLs them after `grace`; wait for their exits."""
        if self.ended.is_set() or self._idle.is_set():
            return
        self.outbox.put_nowait(host_pb.HostCommand(stop=host_pb.HostStop(grace_s=grace)))
        await within(2 * grace + 1, self._idle.wait(), self.ended.wait())

    async def drained(self) -> None:
        """The agent ends its stream once its ranks' output is all sent: wait for that while
        output keeps coming."""
        await until_quiet(self.ended.wait(), lambda: self._output_bytes, DRAIN_TIMEOUT_S)

    async def close(self) -> None:
        self.outbox.put_nowait(None)

    async def sample(self, pid: int, all_threads: bool, timeout: float) -> list[pb.ThreadStack]:
        """Ask the agent to py-spy `pid` on its host; PySpyError with its reason, or when the
        answer takes longer than `timeout` plus a round trip."""
        if self.ended.is_set():
            raise PySpyError(f"its host {self} is {self.state}")

        def send(request_id: int) -> None:
            self.outbox.put_nowait(host_pb.HostCommand(sample=host_pb.HostSample(
                request_id=request_id, pid=pid, all_threads=all_threads, timeout_s=timeout)))

        try:
            answer = await asyncio.wait_for(self._samples.request(send), timeout + SAMPLE_TRIP_S)
        except TimeoutError:
            raise PySpyError(f"no py-spy answer from its host {self} within {timeout + SAMPLE_TRIP_S:g} s") from None
        if answer.error:
            raise PySpyError(answer.error)
        return list(answer.threads)

    async def flushed(self, rank: int) -> None:
        """Ask the agent to send on what `rank` wrote so far; return once it has (its answer
        follows that output on the stream), or at once when the stream is over."""
        await self._flushes.request(lambda request_id: self.outbox.put_nowait(
            host_pb.HostCommand(flush=host_pb.HostFlush(request_id=request_id, rank=rank))))

    async def pump(self, request_iterator: AsyncIterator[host_pb.HostMessage]) -> None:
        """Hand the agent's messages to the launcher; when they end, end our side too."""
        try:
            async for message in request_iterator:
                kind = message.WhichOneof("kind")
                if kind == "spawned":
                    self._running.add(message.spawned.rank)
                    self._idle.clear()
                    self.launcher.spawned(self, message.spawned.rank, message.spawned.pid)
                elif kind == "exit":
                    self._ended_rank(message.exit.rank)
                    self.launcher.exited(message.exit.rank, message.exit.code)
                elif kind == "stacks":
                    self._samples.answer(message.stacks.request_id, message.stacks)
                elif kind == "output":
                    self._write(message.output)
                elif kind == "flushed":
                    self._flushes.answer(message.flushed.request_id, None)
        except grpc.RpcError:
            pass  # the agent went away: its stream ends as if it had closed it
        self.outbox.put_nowait(None)
        self._samples.close(host_pb.HostStacks(error=f"its host {self} went away"))
        self._flushes.close()

    def _write(self, output: host_pb.HostOutput) -> None:
        """Write the complete lines the agent sent (a batch split into chunks is joined back
        first, so another host's lines never land inside one of this host's), less those the
        rank's session showed while a console here shows that rank, as for local ranks."""
        self._output_bytes += len(output.text)
        data = self._partial.get(output.stream, b"") + output.text
        complete, newline, self._partial[output.stream] = data.rpartition(b"\n")
        if newline:
            self._sinks(output.rank, Stream(output.stream))((complete + newline).decode(errors="replace"), output.shown)

    def _ended_rank(self, rank: int) -> None:
        self._exited.add(rank)
        self._running.discard(rank)
        if not self._running:
            self._idle.set()

    def on_end(self) -> None:
        """The stream is over: done if every rank had exited, else the host is lost."""
        self.ended.set()
        if self.state is not HostState.UP:
            return
        if set(self.ranks) <= self._exited:
            self.state = HostState.DONE
            return
        self.state = HostState.LOST
        lost = ranks_text(sorted(set(self.ranks) - self._exited))
        said(log, f"meshdbg: host {self.index} {self} lost: {lost} marked exited (host lost)", logging.WARNING)
        self.launcher.host_lost(self)


class JoinPlacer:
    """Waits for `hosts` agents to dial in, then places the mesh's ranks on them."""

    name = "join"

    def __init__(self, hosts: int, wait_s: float) -> None:
        self.expected = hosts
        self.wait_s = wait_s
        self.joined: list[RemoteHost] = []
        self.placed = False
        self._full = asyncio.Event()
        self._launcher: "MeshLauncher | None" = None
        self.failed: asyncio.Future[str] | None = None  # why the agents cannot come (a placer that starts them)

    def prepare(self, launcher: "MeshLauncher") -> list:
        self._launcher = launcher
        self.failed = asyncio.get_running_loop().create_future()
        return []

    async def start_agents(self, launcher: "MeshLauncher") -> None:
        """Print the join line; placers that start the agents themselves override this."""
        connection = launcher.server.connection
        where = f" (or --token-file {launcher.server.connection_file})" if launcher.server.connection_file else ""
        said(log, f"meshdbg: waiting {self.wait_s:g} s for {self.expected} host(s); on each host, with this run's "
                  f"MESHDBG_TOKEN{where}, run:\n  meshdbg host --join {connection.join}")

    async def close(self) -> None:
        """Release what start_agents started."""

    def fail_if_gone(self, process: asyncio.subprocess.Process, what: str) -> None:
        """Have `place` fail at once if `process` (what starts agents: srun, ssh) exits before
        every host has joined."""
        failed = self.failed
        assert failed is not None  # prepare() made it

        async def watch() -> None:
            status = await process.wait()
            if not failed.done() and not self.placed:
                failed.set_result(f"before {what} exited (status {status})")

        asyncio.get_running_loop().create_task(watch())

    async def place(self, launcher: "MeshLauncher") -> list[RemoteHost]:
        failed = self.failed
        assert failed is not None  # prepare() made it
        await self.start_agents(launcher)
        await within(self.wait_s, self._full.wait(), asyncio.shield(failed))
        if not self._full.is_set():
            who = ", ".join(f"{h} index hint {h.hint}" if h.hint is not None else str(h) for h in self.joined)
            why = failed.result() if failed.done() else f"within {self.wait_s:g} s"
            raise UsageError(f"{len(self.joined)} of {self.expected} hosts joined {why}" + (f": {who}" if who else "")
                             + ("" if failed.done() else " (--wait-hosts waits longer)"))
        self.placed = True
        hosts = order_hosts(self.joined)
        for index, host in enumerate(hosts):
            host.index = index
        said(log, "meshdbg: hosts by index: " + ", ".join(f"{h.index} {h}" for h in hosts))
        digests = {h.digest for h in hosts}
        if len(digests) > 1:
            differ = ", ".join(f"host {h.index} {h}: {h.digest[:19] or 'no script'}" for h in hosts)
            said(log, f"meshdbg: warning: the script differs between hosts ({differ})", logging.WARNING)
        return hosts

    def _refusal(self, hello: host_pb.HostHello, address: str) -> str | None:
        """Why this agent may not join, if it may not."""
        if hello.protocol_version != PROTOCOL_VERSION:
            return (f"protocol version {hello.protocol_version} (meshdbg {printable(hello.meshdbg_version)}) is not the run's "
                    f"{PROTOCOL_VERSION}: install the same meshdbg on every host")
        if self.placed or len(self.joined) >= self.expected:
            return f"too late: the run already has its {self.expected} host(s)"
        for other in self.joined:
            if (other.hostname, other.address) == (hello.hostname, address):
                return f"duplicate: {other} has already joined"
            if hello.HasField("index_hint") and other.hint == hello.index_hint:
                return f"duplicate index {hello.index_hint}: {other} has it"
        if hello.HasField("index_hint") and not 0 <= hello.index_hint < self.expected:
            return f"index {hello.index_hint} is out of range for {self.expected} host(s)"
        return None

    async def join(self, request_iterator: AsyncIterator[host_pb.HostMessage], context: grpc.aio.ServicerContext
                   ) -> AsyncIterator[host_pb.HostCommand]:
        first = await first_message(request_iterator, context, JOIN)
        if first is None or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"{JOIN} must open with hello")
        address = peer_ip(context.peer())
        refusal = self._refusal(first.hello, address)
        if refusal is not None:
            said(log, f"meshdbg: refused host {printable(first.hello.hostname)} ({address}): {refusal}", logging.WARNING)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"refused by the run: {refusal}")
        launcher = self._launcher
        assert launcher is not None  # the join service is served only once prepare() ran
        host = RemoteHost(launcher, first.hello, address)
        yield host_pb.HostCommand(welcome=host_pb.HostWelcome(argv=launcher.argv, cwd=launcher.cwd))
        digest = await first_message(request_iterator, context, JOIN)
        if digest is None or not digest.HasField("digest"):
            return
        host.digest = printable(digest.digest.script_digest)
        refusal = self._refusal(first.hello, address)  # another may have come in meanwhile
        if refusal is not None:
            log.warning("refused host %s (%s) after its welcome: %s", host, address, refusal)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"refused by the run: {refusal}")
        self.joined.append(host)
        said(log, f"meshdbg: host {host} joined ({len(self.joined)}/{self.expected})")
        if len(self.joined) == self.expected:
            self._full.set()
        pump = asyncio.create_task(host.pump(request_iterator))
        try:
            while (command := await host.outbox.get()) is not None:
                yield command
        finally:
            pump.cancel()
            if not self.placed:
                self.joined.remove(host)
            host.on_end()


async def end_within(process: asyncio.subprocess.Process, timeout: float) -> None:
    """Wait for a process a placer started (srun, ssh) to exit, `timeout` seconds at most, then kill it."""
    if process.returncode is not None:
        return
    try:
        await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
