"""The console's hold on the server: the current ControlClient, and a new one when it is lost.

A console outlives its server: when a call fails with ConnectionFailed the link is marked
lost, and the next use connects afresh (a new channel, so gRPC's reconnect back-off does not
delay us), first to the same address, then to whatever the connection file names now, since
a restarted `meshdbg serve --port 0` listens elsewhere. Clients this link made are closed by
it; the one it was given belongs to the caller.
"""

from __future__ import annotations

import asyncio

from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import ConnectionFailed, MeshdbgError


class Link:
    """The current ControlClient; `ensure()` reconnects after a loss."""

    def __init__(self, client: ControlClient) -> None:
        self.client = client
        self.lost: str | None = None
        self._given = client
        self._lock = asyncio.Lock()
        self.reconnected = asyncio.Event()

    def mark_lost(self, exc: MeshdbgError) -> None:
        self.lost = str(exc)
        self.reconnected.clear()

    async def ensure(self) -> ControlClient:
        """The client to use now: reconnected first when the server was lost."""
        if self.lost is not None:
            await self.reconnect()
        return self.client

    async def reconnect(self) -> None:
        """Connect to the server again; ConnectionFailed when nothing answers."""
        async with self._lock:
            if self.lost is None:
                return
            failure: MeshdbgError = ConnectionFailed(self.lost)
            for addr in (self.client.connection.addr, None):
                try:
                    client = await ControlClient.connect(addr)
                except ConnectionFailed as exc:
                    failure = exc
                    continue
                await self._replace(client)
                return
            self.lost = str(failure)
            raise failure

    async def _replace(self, client: ControlClient) -> None:
        old, self.client = self.client, client
        if old is not self._given:
            await old.close()
        self.lost = None
        self.reconnected.set()

    async def close(self) -> None:
        """Close the client this link made (the given one is the caller's to close)."""
        if self.client is not self._given:
            await self.client.close()
