"""Wait, through the control API, until the live sessions match a condition; print them as JSON.

    python wait_sessions.py '{"stopped": [0, 1], "running": [2], "live": [0, 1, 2]}' TIMEOUT_S

`stopped`/`running`: these ranks have a session in that state; `live`: exactly these ranks
have sessions. Run as a subprocess so the test process never starts gRPC's threads: pexpect
forks it to start each console, and gRPC does not survive a fork.
"""

from __future__ import annotations

import asyncio
import json
import sys

from meshdbg.debugger.console.board import SYNCED
from meshdbg.debugger.control import ControlClient, SessionView


def matches(condition: dict[str, list[int]], live: list[SessionView]) -> bool:
    by_state = {state: {s.rank for s in live if s.state == state} for state in ("stopped", "running")}
    if any(not set(condition.get(state, ())) <= ranks for state, ranks in by_state.items()):
        return False
    return "live" not in condition or {s.rank for s in live} == set(condition["live"])


async def watch_until(condition: dict[str, list[int]]) -> list[SessionView]:
    async with await ControlClient.connect() as client:
        live: dict[int, SessionView] = {}
        synced = False  # the live sessions are replayed first: judge only once they all are
        async for kind, session, _ in client.watch():
            if kind == SYNCED:
                synced = True
            elif kind == "closed":
                live.pop(session.id, None)
            else:
                live[session.id] = session
            if synced and matches(condition, list(live.values())):
                return list(live.values())
    raise RuntimeError("the watch stream ended")


def main() -> int:
    condition, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
    sessions = asyncio.run(asyncio.wait_for(watch_until(condition), timeout))
    json.dump([s.to_json() for s in sessions], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
