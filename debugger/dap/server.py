"""`DapServer`: the DAP listening socket on 127.0.0.1, its connections and the mesh they share."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
from typing import Callable, TextIO

from meshdbg.debugger.control import ControlClient, InProcessServer
from meshdbg.debugger.dap.clients import IdeClient
from meshdbg.debugger.dap.mesh import Mesh
from meshdbg.debugger.dap.output import RankOutput
from meshdbg.host.output import RankLines
from meshdbg.debugger.dap.vocabulary import Event
from meshdbg.wire.coords import listening_port
from meshdbg.wire.errors import UsageError

HOST = "127.0.0.1"  # loopback only: the token in `attach` is checked too, as every local user can connect


def listen_for_ides(port: int) -> socket.socket:
    """A socket listening on HOST:`port` (0: a free one) from now on, for a DapServer to serve:
    taken before anything else starts, so that `run --dap` with a port in use fails before any
    rank runs (it started the whole mesh first). UsageError when it cannot listen there."""
    port = listening_port(port)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio.start_server sets it
        listener.bind((HOST, port))
        listener.listen(socket.SOMAXCONN)
    except OSError as exc:
        listener.close()
        why = "the port is taken" if exc.errno == errno.EADDRINUSE else os.strerror(exc.errno or 0)
        raise UsageError(f"cannot listen on {HOST}:{port}: {why}") from None
    listener.setblocking(False)
    return listener


class DapServer:
    """Serves IDE connections over one control client (`start`, then `follow` until the debug
    server goes away, then `close`)."""

    def __init__(self, client: ControlClient, listener: socket.socket, owns_client: bool = False) -> None:
        self.client = client
        self.mesh = Mesh(client)
        self._listener = listener  # from listen_for_ides: closed with this server
        self.port: int = listener.getsockname()[1]
        self._owns_client = owns_client
        self._server: asyncio.Server | None = None
        self._connections: set[IdeClient] = set()
        self._unlisten: Callable[[], None] = lambda: None

    @classmethod
    async def beside(cls, server: InProcessServer, listener: socket.socket, lines: RankLines) -> "DapServer":
        """A started DAP server on `listener` over a client of its own to `server`, in the
        server's process (ControlClient.beside), sending the ranks' output `lines` to the IDE
        (`run --dap`, meshdbg.debugger.dap.output)."""
        dap = cls(ControlClient.beside(server), listener, owns_client=True)
        try:
            await dap.start()
        except BaseException:
            await dap.close()
            raise
        dap._unlisten = lines.listen(RankOutput(dap.mesh))
        return dap

    async def start(self) -> int:
        """Serve IDEs on the listener; its port."""
        self._server = await asyncio.start_server(self._connected, sock=self._listener)
        return self.port

    @property
    def listening_line(self) -> str:
        return f"meshdbg dap: listening on {HOST}:{self.port}"

    def launch_configuration(self) -> str:
        """What to put in VS Code's launch.json (the stock Python Debugger attaches with it)."""
        return json.dumps({"name": "meshdbg", "type": "debugpy", "request": "attach",
                           "connect": {"host": HOST, "port": self.port},
                           "meshdbg": {"token": self.client.connection.token}}, indent=4)

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = IdeClient(reader, writer, self.mesh, self.client.connection.token, (HOST, self.port))
        self._connections.add(client)
        try:
            await client.serve()
        finally:
            self._connections.discard(client)

    async def follow(self) -> None:
        """Keep the mesh up to date until the debug server's watch stream ends (raises
        MeshdbgError when the server goes away)."""
        await self.mesh.follow()

    async def close(self) -> None:
        """Tell every IDE session it is over and stop listening; ranks stay as they are."""
        self._unlisten()
        for group in list(self.mesh.groups.values()):
            self.mesh.close_group(group)  # its child: exited, terminated
        for connection in list(self._connections):
            if connection.group is None:
                connection.event(Event.TERMINATED)
            await connection.close()
        if self._server is not None:
            self._server.close()
        self._listener.close()  # (not served yet when start was never reached)
        await self.mesh.close()
        if self._owns_client:
            await self.client.close()

    def announce(self, file: TextIO) -> None:
        """The listening line (first), then the launch.json configuration."""
        print(self.listening_line, file=file, flush=True)
        print(f"launch.json configuration (VS Code's Python Debugger):\n{self.launch_configuration()}", file=file,
              flush=True)
