"""`meshdbg attach RANK` without a console: line-based pdb over the control API.

Reads lines from stdin (with the terminal's line editing when it is one) until `detach`,
EOF, or the session ends. Useful from scripts and dumb terminals.
"""

from __future__ import annotations

import asyncio
import sys

from meshdbg.debugger.control import ControlClient, PdbReply

DETACH_WORDS = ("detach",)


def _show(reply: PdbReply) -> None:
    if reply.output:
        sys.stdout.write(reply.output if reply.output.endswith("\n") else reply.output + "\n")
    if reply.ended:
        sys.stdout.write(f"meshdbg: session ended ({reply.reason})\n")
    sys.stdout.flush()


async def attach_lines(client: ControlClient, rank: int | None = None, session_id: int | None = None) -> int:
    """Drive one session line by line; the session stays paused when we detach."""
    async with client.attach(rank=rank, session_id=session_id) as attached:
        session = attached.session
        print(f"meshdbg: attached to rank {session.rank} ({session.coords_text or 'no coords'}, "
              f"{session.thread}); `detach` or Ctrl-D leaves it paused")
        _show(attached.replay)
        reply = attached.replay
        while not reply.ended:
            try:
                line = await asyncio.to_thread(input, reply.prompt or "(Pdb) ")
            except EOFError:
                print()
                break
            if line.strip() in DETACH_WORDS:
                break
            reply = await attached.send(line)
            _show(reply)
    return 0
