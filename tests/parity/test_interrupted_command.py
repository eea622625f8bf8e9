"""Ctrl-C on a pdb command blocked in C (a sleep, an Event's wait) in the main thread: local pdb
raises KeyboardInterrupt into the call at once (SIGINT ends the wait), and so does meshdbg's
interrupt. Local pdb, in a terminal with a real Ctrl-C, is the oracle."""

from __future__ import annotations

import asyncio

import pytest

from e2e import Server
from parity import PROMPT, REPLY_S, SCRIPTS, LocalPdb, bootstrap_worker, normalise
from watching import watch_until

BLOCKING = {  # each prints where it starts, then waits far longer than the test may take
    "sleep": "!print('blocking', flush=True); import time; time.sleep(600)",
    "event": "p print('blocking', flush=True) or __import__('threading').Event().wait()",
}
AFTER = "p value * 6"
BLOCKED = "blocking\n"  # what each command prints as it starts (not the script's name in pdb's position)
INTERRUPTED_WITHIN_S = 10.0


def local_interrupted(line: str) -> str:
    """What local pdb shows from `line` to the prompt after Ctrl-C, and the reply to AFTER."""
    with LocalPdb("blocking_command.py") as local:
        local.wait_for(PROMPT)
        local.type(line)
        local.wait_for(BLOCKED)
        local.interrupt()
        local.wait_for(PROMPT, 2)
        local.type(AFTER)
        local.wait_for(PROMPT, 3)
        text = local.text
        local.finish()
    start = text.index(BLOCKED)
    return normalise(text[start:text.index(PROMPT, text.index(PROMPT, start) + 1)])


@pytest.mark.parametrize("bootstrap", [False, True], ids=["hook", "bootstrap"])
@pytest.mark.parametrize("command", sorted(BLOCKING))
def test_interrupting_a_blocked_command_ends_it_at_once_as_local_pdb(server: Server, command: str,
                                                                    bootstrap: bool) -> None:
    line = BLOCKING[command]
    expected = local_interrupted(line)
    worker = (bootstrap_worker(server, "blocking_command.py") if bootstrap else
              server.worker(str(SCRIPTS / "blocking_command.py")))
    server.wait_sessions(1)

    async def body(client) -> str:
        async with client.attach(rank=0) as pdb:
            blocked = asyncio.create_task(pdb.send(line))
            await asyncio.wait_for(watch_until(client, {"running": [0]}), REPLY_S)
            await client.break_in(pdb.session.id)
            reply = await asyncio.wait_for(blocked, INTERRUPTED_WITHIN_S)  # not when the wait would end
            after = await pdb.send(AFTER)
            assert (await pdb.send("c")).ended
            return f"{reply.output}{reply.prompt}{after.output}"

    got = normalise(server.run(body))
    assert got == expected
    out, err = worker.communicate(timeout=30)
    assert (worker.returncode, out.splitlines()[-1:]) == (0, ["value 7"]), err  # (its log has "blocking" too)
