"""How every peer finds and authenticates to the server: address, token, connection file.

Shared by workers, the CLI and the console so that all of them resolve the server the same
way: `--addr`, else `MESHDBG_ADDR`, else the connection file the running server wrote
(`MESHDBG_CONNECTION_FILE`, else ~/.meshdbg/connection.json, mode 0600). The token comes
from `MESHDBG_TOKEN`, else that same file. Kept light: a worker imports it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from meshdbg.wire.errors import ConnectionFailed

PROTOCOL_VERSION = 2  # 2: states, reasons and watch kinds are enums
AUTH_HEADER = "authorization"


@dataclass(frozen=True)
class ConnectionInfo:
    """Where the server listens and the token that opens it."""

    addr: str
    token: str

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """gRPC call metadata that authenticates one RPC."""
        return ((AUTH_HEADER, f"Bearer {self.token}"),)


def connection_file_path() -> Path:
    """The connection file this environment reads and a server writes."""
    named = os.environ.get("MESHDBG_CONNECTION_FILE")
    return Path(named) if named else Path.home() / ".meshdbg" / "connection.json"


def new_token() -> str:
    """The token a server uses: `MESHDBG_TOKEN` when set, else a fresh random one."""
    import secrets  # servers only: clients, which start often, never pay for it

    return os.environ.get("MESHDBG_TOKEN") or secrets.token_urlsafe(32)


def write_connection_file(info: ConnectionInfo, path: Path | None = None) -> Path:
    """Publish `info` for local clients: written atomically, readable by the owner only."""
    path = path or connection_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"addr": info.addr, "token": info.token, "pid": os.getpid()}, handle)
    os.replace(tmp, path)
    return path


def remove_connection_file(info: ConnectionInfo, path: Path | None = None) -> None:
    """Remove the connection file if it still describes `info` (another server may own it now)."""
    path = path or connection_file_path()
    try:
        if json.loads(path.read_text()).get("addr") == info.addr:
            path.unlink()
    except (OSError, ValueError):
        pass


def resolve_connection(addr: str | None = None) -> ConnectionInfo:
    """Find the server and its token, or raise ConnectionFailed saying what is missing."""
    addr = addr or os.environ.get("MESHDBG_ADDR")
    token = os.environ.get("MESHDBG_TOKEN")
    if addr and token:
        return ConnectionInfo(addr, token)
    path = connection_file_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        data = None
    except (OSError, ValueError) as exc:
        raise ConnectionFailed(f"cannot read the connection file {path}: {exc}") from exc
    if data is None:
        if addr:
            raise ConnectionFailed(f"no token for {addr}: set MESHDBG_TOKEN (no connection file at {path})")
        raise ConnectionFailed(
            f"no meshdbg server found: start one with `meshdbg serve`, or set MESHDBG_ADDR and "
            f"MESHDBG_TOKEN (no connection file at {path})"
        )
    file_addr, file_token = data.get("addr"), data.get("token")
    if not isinstance(file_addr, str) or not isinstance(file_token, str):
        raise ConnectionFailed(f"the connection file {path} lacks an addr or a token")
    if addr and addr != file_addr:
        raise ConnectionFailed(f"no token for {addr}: set MESHDBG_TOKEN (the connection file {path} is for {file_addr})")
    return ConnectionInfo(file_addr, token or file_token)
