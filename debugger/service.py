"""`DebugClient`: the central server that every worker session and control client reaches."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Callable, Sequence

import grpc

from meshdbg.debugger.attached_client import AttachedClient
from meshdbg.debugger.auth import DecodingInterceptor, TokenInterceptor
from meshdbg.debugger.certificates import ServerCertificate
from meshdbg.wire.tls import insecure_bind_warning
from meshdbg.debugger.collectives import guard_collectives
from meshdbg.debugger.local_channel import LocalChannel, MethodTable
from meshdbg.wire.connection import ConnectionInfo, join_url, new_token, remove_connection_file, write_connection_file
from meshdbg.wire.coords import listening_port
from meshdbg.wire.environment import PAUSE_TIMEOUT
from meshdbg.wire.errors import MeshdbgError, UsageError
from meshdbg.wire.keepalive import SERVER_KEEPALIVE
from meshdbg.wire.logs import logger, said
from meshdbg.debugger.mesh_servicer import MeshServicer
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.wire.proto import mesh_pb2_grpc as mesh_grpc
from meshdbg.debugger.servicer import DebuggerServicer
from meshdbg.debugger.registry import SessionRegistry
from meshdbg.debugger.workers import WorkerRegistry

# Workers keep their streams open for a long time; notice dead and hung peers in seconds
# (meshdbg.wire.keepalive). Never share a port with another server (gRPC sets SO_REUSEPORT
# by default). And take a burst of thousands of breakpoints at once: gRPC queues calls that
# arrive faster than the asyncio server picks them up, and past 3,000 queued (its hard limit)
# fails them with INTERNAL, which is what refused a burst of ~3,200 simultaneous breakpoints.
log = logger(__name__)
BURST_LIMIT = 1 << 20
GOODBYE_S = 1.0  # how long a stopping server waits for its goodbyes to be taken
# No bandwidth-delay probes: they grow each connection's receive window as bytes arrive,
# whether or not the server's loop takes them, and on a loaded machine a worker printing 100 MB
# had its output taken into the server's memory ahead of the client taking it (the server's
# peak RSS grew 12-94 MB passing on 100 MB with the machine's one core shared four ways; 4-9 MB
# on gRPC's default window). A huge output takes ~5 % longer so (0.81 against 0.77 s, 100 MB).
SERVER_OPTIONS = [("grpc.so_reuseport", 0), *SERVER_KEEPALIVE, ("grpc.http2.bdp_probe", 0),
                  ("grpc.server.max_pending_requests", BURST_LIMIT),
                  ("grpc.server.max_pending_requests_hard_limit", BURST_LIMIT)]


class DebugClient:
    """Owns the session and worker registries and serves them over authenticated gRPC.

    Binds loopback unless `host` says otherwise; `port=0` picks a free port, read back
    from `start()`. With `publish=True` it writes its own connection file, which local clients
    read, saying `what` it is (e.g. "serve", "run train.py"), and removes that file when it stops.
    With `tls`, every connection is TLS and the certificate's fingerprint is published for
    clients to pin; binding beyond loopback without it prints a warning. `services` add more
    servicers to the same server (a run's host agents, meshdbg.debugger.mesh.joining); with
    `advertise` (the address other hosts dial), the connection carries the join URL.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 registry: SessionRegistry | None = None, publish: bool = True, what: str = "serve",
                 tls: ServerCertificate | None = None,
                 services: Sequence[Callable[[grpc.aio.Server], None]] = (), advertise: str | None = None) -> None:
        self.host = host
        self.port = listening_port(port)
        self.token = token or new_token()
        self.registry = registry or SessionRegistry()
        self.workers = WorkerRegistry(self.registry)  # agent streams (protos/mesh.proto)
        self.publish = publish
        self.what = what
        self.tls = tls
        self.services = list(services)
        self.advertise = advertise
        self._connection: ConnectionInfo | None = None
        self.connection_file: Path | None = None
        self.pause_timeout_s = PAUSE_TIMEOUT.get()  # pause-safe collectives (meshdbg.debugger.collectives)
        self._server: MethodTable | None = None
        self._guard: asyncio.Task[None] | None = None

    async def start(self) -> ConnectionInfo:
        """Start serving; returns the address and token clients need."""
        server = MethodTable(grpc.aio.server(interceptors=[TokenInterceptor(self.token), DecodingInterceptor()],
                                             options=SERVER_OPTIONS))
        pb_grpc.add_DebuggerServicer_to_server(DebuggerServicer(self.registry, self.workers), server)
        mesh_grpc.add_MeshServicer_to_server(MeshServicer(self.workers), server)
        for add_service in self.services:
            add_service(server)
        host = f"[{self.host}]" if ":" in self.host else self.host
        try:
            if self.tls is not None:
                credentials = grpc.ssl_server_credentials([(self.tls.key_pem, self.tls.cert_pem)])
                port = server.add_secure_port(f"{host}:{self.port}", credentials)
            else:
                port = server.add_insecure_port(f"{host}:{self.port}")
        except RuntimeError as exc:
            raise UsageError(f"cannot listen on {host}:{self.port}: the address is not one of this machine's "
                             f"or the port is taken") from exc
        warning = insecure_bind_warning(self.host, self.tls is not None)
        if warning:  # once bound: a failed bind says only why it failed
            said(log, warning, logging.WARNING)
        await server.start()
        self._server = server
        self._guard = asyncio.create_task(guard_collectives(self.registry, self.workers, self.pause_timeout_s))
        fingerprint = self.tls.fingerprint if self.tls else ""
        join = join_url(f"{self.advertise}:{port}", fingerprint) if self.advertise else ""
        self._connection = ConnectionInfo(f"{host}:{port}", self.token, fingerprint, join)
        if self.publish:
            try:
                self.connection_file = write_connection_file(self.connection, self.what)
            except BaseException:
                await self.stop(0)
                raise
        log.info("`meshdbg %s` serving on %s%s (pid %d), connection file %s, join URL %s", self.what,
                 self._connection.addr, " with TLS" if self.tls else "", os.getpid(), self.connection_file,
                 join or "none")
        return self.connection

    @property
    def connection(self) -> ConnectionInfo:
        """The address and token clients need, once `start` returned."""
        if self._connection is None:
            raise MeshdbgError(f"`meshdbg {self.what}` has not started")
        return self._connection

    def local_channel(self) -> LocalChannel:
        """A channel to this server for a client in its own process and loop (`meshdbg run`'s
        console): no socket, no token, the same handlers (meshdbg.debugger.local_channel)."""
        if self._server is None:
            raise MeshdbgError(f"`meshdbg {self.what}` has not started")
        return LocalChannel(self._server)

    def attached(self, target: pb.AttachTarget) -> AttachedClient:
        """An attach for a client in this process and loop (`meshdbg run`'s console), called
        in place of a stream (ControlClient.beside); MeshdbgError when `target` names no session."""
        return AttachedClient(self.registry, target)

    def idle(self) -> bool:
        """No session is open: a garbage-collection pause costs no one anything now."""
        return not len(self.registry)

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def stop(self, grace: float = 1.0) -> None:
        """Stop serving; sessions see their streams end and their workers continue."""
        if self._server is None:
            return
        if self.connection_file is not None and self._connection is not None:
            remove_connection_file(self.connection_file, self.connection)
            self.connection_file = None
        server, self._server = self._server, None
        log.info("stopping: %d sessions, %d workers", len(self.registry), len(self.workers.workers()))
        if self._guard is not None:
            self._guard.cancel()
        await self.registry.say_goodbye(f"`meshdbg {self.what}` stopped", GOODBYE_S)  # its workers continue at once
        for worker in self.workers.workers():
            worker.end_stream()  # an agent stream the server ends is over: the agent does not reconnect
        self.registry.end_watches()  # watch streams end on their own instead of being cancelled
        await server.stop(grace)
