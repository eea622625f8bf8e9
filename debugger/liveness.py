"""Why a worker's stream broke, said as precisely as this host can tell.

The stream of a worker that died breaks at once; that of a hung one (SIGSTOP) breaks when it
stops answering keepalive pings (meshdbg.wire.keepalive). For a worker on this host, its
process state tells the two apart; for one elsewhere, the message names both.
"""

from __future__ import annotations

import socket
from typing import NamedTuple

from meshdbg.wire.proto import debugger_pb2 as pb

_HOSTNAME = socket.gethostname()


def _process_state(pid: int) -> str | None:
    """The state letter of a local process (`R`, `S`, `T` stopped, `Z` zombie), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return None


class Gone(NamedTuple):
    """Why a worker's stream broke; `alive` when its process is still there (hung, or cut off)."""

    text: str
    alive: bool


def gone_reason(identity: pb.Identity) -> Gone:
    """`rank 1 (pid 42) exited or was killed`, `... is stopped (SIGSTOP) and not answering`,
    or, for a worker elsewhere, `... is not answering (it died, hung, or lost its connection)`."""
    who = f"rank {identity.rank} (pid {identity.pid})"
    if identity.hostname != _HOSTNAME or identity.pid <= 0:
        return Gone(f"{who} is not answering (it died, hung, or lost its connection)", True)
    state = _process_state(identity.pid)
    if state is None or state in "ZX":
        return Gone(f"{who} exited or was killed", False)
    if state in "Tt":
        return Gone(f"{who} is stopped (SIGSTOP) and not answering", True)
    return Gone(f"{who} is not answering (it lost its connection to the server)", True)
