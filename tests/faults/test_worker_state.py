"""A worker's listed state follows its session: `stopped` only once pdb's prompt (and so its
position) has arrived, never a stopped rank with no place to show.

A real grpc.aio server on loopback; the test speaks for the worker over real streams so it
can hold the moment between a session's hello and its first prompt, which a real worker
passes in a few milliseconds (CI once listed a post-mortem rank as stopped with no function).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys

import grpc

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient
from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.wire.proto import mesh_pb2_grpc as mesh_grpc
from meshdbg.wire.vocabulary import State, WatchKind


async def _wait_state(stub: pb_grpc.DebuggerStub, metadata, state: State) -> pb.WorkerInfo:
    """The one listed worker, once it is in `state` (5 s at most)."""
    async def poll() -> pb.WorkerInfo:
        while True:
            workers = (await stub.List(pb.ListRequest(all=True), metadata=metadata)).workers
            if workers and workers[0].state == state.pb:
                return workers[0]
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), 5)


def test_a_worker_is_stopped_only_once_its_prompt_has_come() -> None:
    async def scenario() -> list[tuple[State, str]]:
        server = DebugClient(publish=False)
        connection = await server.start()
        seen = []
        identity = pb.Identity(name="w", rank=1, hostname=socket.gethostname(), pid=os.getpid(),
                               protocol_version=PROTOCOL_VERSION)
        try:
            async with grpc.aio.insecure_channel(connection.addr) as channel:
                metadata = connection.metadata()
                stub = pb_grpc.DebuggerStub(channel)
                agent = mesh_grpc.MeshStub(channel).Agent(metadata=metadata)
                await agent.write(mesh_pb.AgentMessage(hello=mesh_pb.AgentHello(identity=identity, launcher="none")))
                await asyncio.wait_for(agent.read(), 5)  # the welcome
                running = await _wait_state(stub, metadata, State.RUNNING)
                seen.append((State.RUNNING, running.frame.function))

                session = stub.Session(metadata=metadata)
                await session.write(pb.WorkerMessage(hello=identity))
                await asyncio.wait_for(session.read(), 5)  # the welcome: the session is open, no prompt yet
                between = (await stub.List(pb.ListRequest(all=True), metadata=metadata)).workers[0]
                seen.append((State.of(between.state), between.frame.function))

                frame = pb.Frame(filename="/job/crash.py", function="compute", lineno=7)
                await session.write(pb.WorkerMessage(prompt=pb.Prompt(prompt="(Pdb) ", frame=frame)))
                stopped = await _wait_state(stub, metadata, State.STOPPED)
                seen.append((State.STOPPED, stopped.frame.function))
                session.cancel()
                agent.cancel()
        finally:
            await server.stop(0)
        return seen

    assert asyncio.run(scenario()) == [(State.RUNNING, ""), (State.RUNNING, ""), (State.STOPPED, "compute")]


def test_a_watch_that_asks_for_workers_sees_each_one_join_and_end() -> None:
    """What lets the console count a rank that connects later and never stops (issue 11)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # the worker this agent stream speaks for has exited by the time its stream ends

    async def scenario() -> list[tuple[WatchKind, int, State]]:
        server = DebugClient(publish=False)
        connection = await server.start()
        seen: list[tuple[WatchKind, int, State]] = []
        identity = pb.Identity(name="w", rank=7, hostname=socket.gethostname(), pid=gone.pid,
                               protocol_version=PROTOCOL_VERSION)
        try:
            async with ControlClient(connection) as client, grpc.aio.insecure_channel(connection.addr) as channel:
                changes = client.watch(exits=True)
                assert (await anext(changes))[0] is WatchKind.SYNCED  # no session yet
                agent = mesh_grpc.MeshStub(channel).Agent(metadata=connection.metadata())
                await agent.write(mesh_pb.AgentMessage(hello=mesh_pb.AgentHello(identity=identity, launcher="none")))
                kind, view, _ = await asyncio.wait_for(anext(changes), 5)
                seen.append((kind, view.rank, view.state))
                agent.cancel()  # the worker's stream ends: a worker started elsewhere has ended
                kind, view, _ = await asyncio.wait_for(anext(changes), 5)
                seen.append((kind, view.rank, view.state))
                await changes.aclose()
        finally:
            await server.stop(0)
        return seen

    assert asyncio.run(scenario()) == [(WatchKind.JOINED, 7, State.RUNNING), (WatchKind.EXITED, 7, State.EXITED)]


def test_a_worker_whose_agent_stream_broke_is_not_answering_until_its_process_is_gone() -> None:
    """A silent rank (its stream cut, its process alive on this host) is never listed exited."""
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])

    async def scenario() -> list[State]:
        server = DebugClient(publish=False)
        connection = await server.start()
        states: list[State] = []
        identity = pb.Identity(name="w", rank=3, hostname=socket.gethostname(), pid=alive.pid,
                               protocol_version=PROTOCOL_VERSION)
        try:
            async with ControlClient(connection) as client, grpc.aio.insecure_channel(connection.addr) as channel:
                changes = client.watch(exits=True)
                assert (await anext(changes))[0] is WatchKind.SYNCED
                agent = mesh_grpc.MeshStub(channel).Agent(metadata=connection.metadata())
                await agent.write(mesh_pb.AgentMessage(hello=mesh_pb.AgentHello(identity=identity, launcher="none")))
                assert (await asyncio.wait_for(anext(changes), 5))[0] is WatchKind.JOINED
                agent.cancel()
                stub = pb_grpc.DebuggerStub(channel)
                states.append((await _wait_state(stub, connection.metadata(), State.NOT_ANSWERING)).state)
                alive.kill()
                alive.wait()
                kind, view, _ = await asyncio.wait_for(anext(changes), 5)
                states.append(view.state if kind is WatchKind.EXITED else kind)
                await changes.aclose()
        finally:
            await server.stop(0)
            alive.kill()
        return states

    assert asyncio.run(scenario()) == [State.NOT_ANSWERING.pb, State.EXITED]
