"""The one way tests wait for sessions: on the server's watch stream, never by polling `list`.

    wait_sessions(env, {"stopped": [0, 1], "running": [2], "live": [0, 1, 2]}, timeout=15)
    await watch_until(client, condition)                   (inside a test's own event loop)

Conditions: `stopped`/`running`/`not answering`, these ranks have a session in that state; `live`, exactly
these ranks have sessions; `count`, exactly that many sessions, every one stopped at its
prompt. The stream replays the live sessions, says SYNCED, then reports changes, so nothing can
change unseen between a look and the wait. `wait_sessions` watches from a subprocess (this
file run as a script), so the test process itself never starts gRPC's threads: pexpect forks
it, and gRPC's asyncio state outlives each `asyncio.run`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Mapping, Sequence

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.views import SessionView
from meshdbg.wire.vocabulary import State, WatchKind

Condition = Mapping[str, Sequence[int] | int]


def matches(condition: Condition, live: list[SessionView]) -> bool:
    """Whether the live sessions satisfy `condition` (see the module docstring)."""
    for state in (State.STOPPED, State.RUNNING, State.NOT_ANSWERING):
        if not set(condition.get(state, ())) <= {s.rank for s in live if s.state is state}:
            return False
    if "live" in condition and {s.rank for s in live} != set(condition["live"]):
        return False
    count = condition.get("count")
    return count is None or (len(live) == count and all(s.state is State.STOPPED for s in live))


async def watch_until(client: ControlClient, condition: Condition,
                      live: dict[int, SessionView] | None = None) -> list[SessionView]:
    """The live sessions, as soon as they satisfy `condition`; `live`, when given, holds what
    the stream has shown so far (to say what was seen when the wait times out)."""
    live = {} if live is None else live
    synced = False  # the live sessions are replayed first: judge only once they all are
    async for kind, session, _ in client.watch():
        if kind is WatchKind.SYNCED:
            synced = True
        elif kind is WatchKind.CLOSED:
            live.pop(session.id, None)
        else:
            live[session.id] = session
        if synced and matches(condition, list(live.values())):
            return sorted(live.values(), key=lambda s: (s.rank, s.id))
    raise RuntimeError("the watch stream ended")


def wait_sessions(env: Mapping[str, str], condition: Condition, timeout: float = 15) -> list[dict]:
    """The live sessions as `list --json` shows them, once they satisfy `condition`; the server
    is the one `env` names (MESHDBG_ADDR / MESHDBG_CONNECTION_FILE and the token)."""
    done = subprocess.run([sys.executable, __file__, json.dumps(condition), str(timeout)], env=dict(env),
                          capture_output=True, text=True, timeout=timeout + 10)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise AssertionError(f"sessions never matched {condition} within {timeout:.0f} s: {last}")
    return json.loads(done.stdout)


def summary(sessions: Sequence[SessionView]) -> str:
    """How many sessions, by state, with the ranks of those not stopped: "24 (23 stopped, 1 running: rank 0)"."""
    by_state: dict[str, list[int]] = {}
    for session in sessions:
        by_state.setdefault(session.state.value, []).append(session.rank)
    parts = [f"{len(ranks)} {state}" + ("" if state == State.STOPPED.value else f": ranks {sorted(ranks)}")
             for state, ranks in sorted(by_state.items())]
    return f"{len(sessions)} ({', '.join(parts)})" if parts else "0"


async def _main(condition: Condition, timeout: float) -> list[SessionView]:
    async with await ControlClient.connect() as client:
        live: dict[int, SessionView] = {}
        try:
            return await asyncio.wait_for(watch_until(client, condition, live), timeout)
        except TimeoutError:
            # what the watch stream showed, and what a fresh list shows: a difference is an update the stream missed
            listed = await client.list()
            raise TimeoutError(f"the watch showed {summary(list(live.values()))}; a list now shows {summary(listed)}")


if __name__ == "__main__":
    sessions = asyncio.run(_main(json.loads(sys.argv[1]), float(sys.argv[2])))
    json.dump([s.to_json() for s in sessions], sys.stdout)
