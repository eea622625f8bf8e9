"""The pdb-parity harness: one script, the same pdb lines, through local pdb and through meshdbg.

Local pdb is the oracle (TESTING.md §2): `python SCRIPT < lines` with plain `breakpoint()`,
its output split at the `(Pdb) ` prompts; then the same script as a worker of a private
`meshdbg serve` with the remote hook, the lines sent one by one over the control API, each
reply one chunk. Both transcripts are normalised (object addresses) and compared chunk by
chunk. Scripts print to stderr only, so their own output (which a remote session leaves in
the rank's log) is not part of the comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

from e2e import Server, stop_process
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.connection import ConnectionInfo
from watching import watch_until

SCRIPTS = Path(__file__).parent / "scripts"
PROMPT = re.compile(r"^(\((?:Pdb|com)\) |\(\(Pdb\)\) |\.\.\. {0,3})", re.M)
ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
REPLY_S = 20.0


def normalise(text: str) -> str:
    return ADDRESS.sub("0x…", text)


def local_transcript(script: str, lines: list[str], *args: str) -> list[str]:
    """What local pdb printed: before the first prompt, then after each line typed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MESHDBG_", "PYTHONBREAKPOINT"))}
    done = subprocess.run([sys.executable, str(SCRIPTS / script), *args], input="".join(f"{line}\n" for line in lines),
                          capture_output=True, text=True, timeout=30, env=dict(env, PYTHONUNBUFFERED="1"))
    chunks = re.split(r"\(Pdb\) ", done.stdout)
    return [normalise(chunk) for chunk in chunks[: len(lines) + 1]]


def remote_transcript(server: Server, script: str, lines: list[str], *args: str) -> tuple[list[str], list[int]]:
    """What meshdbg showed (the first stop, then each reply), and the session ids that answered."""
    worker = server.worker(str(SCRIPTS / script), 0, "", *args)
    try:
        server.wait_sessions(1)
        return asyncio.run(_drive(server, lines))
    finally:
        stop_process(worker)


async def _drive(server: Server, lines: list[str]) -> tuple[list[str], list[int]]:
    chunks, ids = [], []
    async with ControlClient(ConnectionInfo(server.addr, server.env["MESHDBG_TOKEN"])) as client:
        async with contextlib.AsyncExitStack() as stack:
            pdb = await stack.enter_async_context(client.attach(rank=0))
            chunks.append(pdb.replay.output)
            ids.append(pdb.session.id)
            for line in lines:
                if pdb.ended:  # after `c`: the next stop is a new session
                    await asyncio.wait_for(watch_until(client, {"stopped": [0]}), REPLY_S)
                    pdb = await stack.enter_async_context(client.attach(rank=0))
                    chunks[-1] += pdb.replay.output
                reply = await asyncio.wait_for(pdb.send(line), REPLY_S)
                chunks.append(reply.output)
                ids.append(pdb.session.id)
    return [normalise(chunk) for chunk in chunks], ids
