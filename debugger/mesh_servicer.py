"""The gRPC face of the worker registry: the `Mesh` service of protos/mesh.proto.

`Agent` moves messages between one worker's stream and its `Worker` in meshdbg.debugger.workers;
the logic (states, calls, interrupts) lives there.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import AsyncIterator

import grpc

from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.wire.proto import mesh_pb2_grpc as mesh_grpc
from meshdbg.debugger.servicer import opening_hello
from meshdbg.debugger.workers import Worker, WorkerRegistry
from meshdbg.wire.coords import format_coords
from meshdbg.wire.logs import logger

log = logger(__name__)


class MeshServicer(mesh_grpc.MeshServicer):
    """Serves the agent stream of every worker over one WorkerRegistry."""

    def __init__(self, workers: WorkerRegistry) -> None:
        self.workers = workers

    async def Agent(self, request_iterator: AsyncIterator[mesh_pb.AgentMessage], context: grpc.aio.ServicerContext
                    ) -> AsyncIterator[mesh_pb.AgentCommand]:
        hello: mesh_pb.AgentHello = await opening_hello(request_iterator, context, "an agent stream",
                                                         lambda hello: hello.identity)
        worker = self.workers.connect(hello)
        log.info("worker %d joined: rank %d (%s) pid %d on %s, started by %s, from %s", worker.id, worker.rank,
                 format_coords(worker.coords), worker.pid, hello.identity.hostname, worker.launcher, context.peer())
        outbox = worker.outbox  # this stream's, even if the worker connects again
        assert outbox is not None  # connect() opened it
        pump = asyncio.create_task(self._pump_worker(request_iterator, worker, outbox))
        try:
            yield mesh_pb.AgentCommand(welcome=mesh_pb.AgentWelcome(worker_id=worker.id, server_pid=os.getpid(),
                                                                    server_host=socket.gethostname()))
            while (command := await outbox.get()) is not None:
                yield command
        finally:
            pump.cancel()
            if worker.outbox is outbox:
                log.info("worker %d (rank %d, pid %d): its agent stream ended", worker.id, worker.rank, worker.pid)
                self.workers.disconnected(worker)

    @staticmethod
    async def _pump_worker(request_iterator: AsyncIterator[mesh_pb.AgentMessage], worker: Worker,
                           outbox: asyncio.Queue[mesh_pb.AgentCommand | None]) -> None:
        """Hand the worker's messages to `worker`; when they end, end the stream's `outbox` too."""
        try:
            async for message in request_iterator:
                kind = message.WhichOneof("kind")
                if kind == "result":
                    worker.on_result(message.result)
                elif kind == "stacks":
                    worker.on_stacks(message.stacks)
                elif kind == "pipeline":
                    worker.on_pipeline(message.pipeline)
                elif kind == "exit":
                    worker.exit_code = message.exit.exit_code
        except grpc.RpcError:
            pass  # the worker went away: its stream ends as if it had closed it
        outbox.put_nowait(None)
