"""The gRPC face of a run's hosts: the `Hosts` service of protos/host.proto.

`Join` hands each `meshdbg host` agent's stream to the run's placer (meshdbg.debugger.mesh.remote),
which refuses it when the run places its ranks itself; `ListHosts` answers `meshdbg hosts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator

import grpc

from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.proto import host_pb2_grpc as host_grpc
from meshdbg.debugger.mesh.hosts import host_info

if TYPE_CHECKING:
    from meshdbg.debugger.mesh.launcher import MeshLauncher


class HostsServicer(host_grpc.HostsServicer):
    """Serves the host agents and the host listing of one launcher."""

    def __init__(self, launcher: "MeshLauncher") -> None:
        self.launcher = launcher

    async def Join(self, request_iterator: AsyncIterator[host_pb.HostMessage], context: grpc.aio.ServicerContext
                   ) -> AsyncIterator[host_pb.HostCommand]:
        join = getattr(self.launcher.placer, "join", None)
        if join is None:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"this run places its ranks itself (--on {self.launcher.placer.name}): no host may join")
        async for command in join(request_iterator, context):
            yield command

    async def ListHosts(self, request: host_pb.HostListRequest, context: grpc.aio.ServicerContext
                        ) -> host_pb.HostListReply:
        return host_pb.HostListReply(hosts=[host_info(host, self.launcher.placer.name) for host in self.launcher.hosts])
