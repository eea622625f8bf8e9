"""`--on ssh:NODE1,NODE2`: one `meshdbg host` agent per node, started over ssh.

    meshdbg run --on ssh:node1,node2 --mesh hosts=2,gpus=4 train.py

For each node, in order (its index), the run starts `ssh -o BatchMode=yes NODE meshdbg host
--join URL --index I --token-file /dev/stdin` and writes the token to that ssh's stdin: never in
a command line, where the node's users could read it. ssh's own configuration (keys, users,
jump hosts) is the user's. The sessions end when their agents do; one still open at the end
is killed.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING

from meshdbg.debugger.mesh.remote import JoinPlacer, end_within
from meshdbg.wire.errors import UsageError
from meshdbg.wire.logs import logger, said

if TYPE_CHECKING:
    from meshdbg.debugger.mesh.launcher import MeshLauncher

log = logger(__name__)
SESSION_END_S = 5.0


class SshPlacer(JoinPlacer):
    """A JoinPlacer whose agents ssh starts, one per named node."""

    name = "ssh"

    def __init__(self, hosts: int, wait_s: float, nodes: list[str]) -> None:
        super().__init__(hosts, wait_s)
        if len(nodes) != hosts:
            raise UsageError(f"--on ssh names {len(nodes)} node(s) ({','.join(nodes)}) for a mesh of {hosts} hosts")
        self.nodes = nodes
        self._sessions: list[asyncio.subprocess.Process] = []

    async def start_agents(self, launcher: "MeshLauncher") -> None:
        said(log, f"meshdbg: starting a host agent on each of {', '.join(self.nodes)} over ssh")
        for index, node in enumerate(self.nodes):
            agent = shlex.join([sys.executable, "-m", "meshdbg", "host", "--join", launcher.server.connection.join,
                                "--index", str(index), "--token-file", "/dev/stdin"])
            try:
                session = await asyncio.create_subprocess_exec(
                    "ssh", "-o", "BatchMode=yes", node, agent, stdin=subprocess.PIPE, stdout=sys.stderr.fileno(),
                    stderr=sys.stderr.fileno())
            except OSError as exc:
                raise UsageError(f"cannot start ssh: {exc.strerror}") from None
            assert session.stdin is not None  # stdin=PIPE
            session.stdin.write(launcher.server.token.encode() + b"\n")
            session.stdin.close()
            self._sessions.append(session)
            self.fail_if_gone(session, f"ssh to {node}")

    async def close(self) -> None:
        await asyncio.gather(*(end_within(session, SESSION_END_S) for session in self._sessions))
