"""`DapServer`: the DAP listening socket on 127.0.0.1, its connections and the mesh they share."""

from __future__ import annotations

import asyncio
import json

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.dap.clients import IdeClient
from meshdbg.debugger.dap.mesh import Mesh

HOST = "127.0.0.1"  # loopback only: the token in `attach` is checked too, as every local user can connect


class DapServer:
    """Serves IDE connections over one control client (`start`, then `follow` until the debug
    server goes away, then `close`)."""

    def __init__(self, client: ControlClient, port: int = 0) -> None:
        self.client = client
        self.mesh = Mesh(client)
        self.port = port
        self._server: asyncio.Server | None = None
        self._connections: set[IdeClient] = set()

    async def start(self) -> int:
        """Listen; the port (a free one for 0)."""
        self._server = await asyncio.start_server(self._connected, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
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
        for connection in list(self._connections):
            connection.event("terminated")
            await connection.close()
        if self._server is not None:
            self._server.close()
        await self.mesh.close()
