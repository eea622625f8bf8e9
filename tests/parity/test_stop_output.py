"""What pdb writes as a stop begins (a `commands` block's output, display changes) is part of
that stop: an attach replays it, and when no one has attached yet the next `cast` returns it
ahead of its own output, as local pdb shows it before its prompt."""

from __future__ import annotations

import asyncio

from e2e import Server
from meshdbg.debugger.control import ControlClient
from parity import SCRIPTS
from test_parity import line
from watching import watch_until

BLOCK = ["b visit", "commands", "p ('CMDS', n)", "end", "display seen if 'seen' in dir() else None"]


async def _next_stop(client: ControlClient, after: int) -> int:
    """The id of rank 0's first stopped session newer than session `after`."""
    async def newer() -> int:
        while True:
            sessions = await watch_until(client, {"stopped": [0]})
            fresh = [s.id for s in sessions if s.id > after]
            if fresh:
                return fresh[0]
            await asyncio.sleep(0)  # the old session is still listed: look again at the next change
    return await asyncio.wait_for(newer(), 15)


def test_a_commands_block_run_as_a_stop_begins_is_returned_by_the_next_cast_once(server: Server) -> None:
    server.worker(str(SCRIPTS / "commands_block.py"))
    server.wait_sessions(1)

    async def body(client: ControlClient) -> list[str]:
        async with client.attach(rank=0) as pdb:
            for command in BLOCK:
                await pdb.send(command)
            await pdb.send("c")
            first = pdb.session.id
        await _next_stop(client, first)
        outputs = [(await client.cast("0", "p n"))[0].output, (await client.cast("0", "p n"))[0].output]
        await client.cast("0", "cl 1")
        await client.cast("0", "c")
        return outputs

    first, second = server.run(body)
    visit = line("commands_block.py", "seen = n * 10")
    assert first == f"('CMDS', 0)\n> {SCRIPTS / 'commands_block.py'}({visit})visit()\n-> seen = n * 10\n0\n", first
    assert second == "0\n"  # shown once


def test_an_attach_replays_the_stop_s_beginning_and_a_cast_after_it_does_not_repeat_it(server: Server) -> None:
    server.worker(str(SCRIPTS / "display.py"))
    server.wait_sessions(1)

    async def body(client: ControlClient) -> tuple[list[str], str, str]:
        async with client.attach(rank=0) as pdb:
            await pdb.send(f"b {line('display.py', 'counter += i')}")
            await pdb.send("display counter")
            await pdb.send("c")
            session = pdb.session.id
        quiet = []
        for _ in range(2):  # i = 0, 1: counter is still 0 when pdb stops, nothing to show
            session = await _next_stop(client, session)
            quiet.append((await client.cast("0", "p i"))[0].output)
            await client.cast("0", "c")
        session = await _next_stop(client, session)  # i = 2: counter went 0 -> 1
        async with client.attach(session_id=session) as pdb:
            replay = pdb.replay.output
        cast = (await client.cast("0", "p i"))[0].output
        await client.cast("0", "cl 1")
        await client.cast("0", "c")
        return quiet, replay, cast

    quiet, replay, cast = server.run(body)
    assert quiet == ["0\n", "1\n"]
    assert replay.endswith("-> counter += i\ndisplay counter: 1  [old: 0]\n") and replay.count("-> counter") == 1, replay
    assert cast == "2\n"  # the attach showed the display change: the cast does not repeat it
