"""The gRPC face of the worker registry: the `Mesh` service of protos/mesh.proto.

`Agent` moves messages between one worker's stream and its `Worker` in debugger.workers;
the logic (states, calls, interrupts) lives there.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator

import grpc

from debugger.proto import mesh_pb2 as mesh_pb
from debugger.proto import mesh_pb2_grpc as mesh_grpc
from debugger.servicer import version_problem
from debugger.workers import Worker, WorkerRegistry


class MeshServicer(mesh_grpc.MeshServicer):
    """Serves the agent stream of every worker over one WorkerRegistry."""

    def __init__(self, workers: WorkerRegistry) -> None:
        self.workers = workers

    async def Agent(self, request_iterator: AsyncIterator[mesh_pb.AgentMessage], context: grpc.aio.ServicerContext
                    ) -> AsyncIterator[mesh_pb.AgentCommand]:
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("hello"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "an agent stream must open with hello")
        problem = version_problem(first.hello.identity.protocol_version)
        if problem:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, problem)
        worker = self.workers.connect(first.hello)
        outbox = worker.outbox
        pump = asyncio.create_task(self._pump_worker(request_iterator, worker))
        try:
            yield mesh_pb.AgentCommand(welcome=mesh_pb.AgentWelcome(worker_id=worker.id))
            while (command := await outbox.get()) is not None:
                yield command
        finally:
            pump.cancel()
            if worker.outbox is outbox:
                worker.on_disconnect()

    @staticmethod
    async def _pump_worker(request_iterator: AsyncIterator[mesh_pb.AgentMessage], worker: Worker) -> None:
        outbox = worker.outbox
        try:
            async for message in request_iterator:
                kind = message.WhichOneof("kind")
                if kind == "result":
                    worker.on_result(message.result)
                elif kind == "exit":
                    worker.exit_code = message.exit.exit_code
        except grpc.RpcError:
            pass
        if outbox is not None:
            outbox.put_nowait(None)
