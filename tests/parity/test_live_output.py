"""A pdb command that runs on shows each line as it is printed, not all at its end. The oracle
is local pdb, unbuffered (as a terminal shows whole lines), for the three ways a command's
output is written: pdb's own stdout in `!`, the program's stdout under `until`, and under `p`,
which leaves sys.stdout alone. The program's is stepped over with `until` past it, not `n`:
3.13's pdb stops on `breakpoint()` itself, where `n` would step over that call first.

Each command prints `line 0`, sleeps PAUSE_S, and so on three times. Local pdb shows `line 0`
about 3 × PAUSE_S before its next prompt; meshdbg's API client must get it (through
`AttachedSession.send`'s `on_output`) at least LIVE_MARGIN_S before the reply, and the same
text in all. The worker runs as under `meshdbg run` (the bootstrap) or under the hook, in turn:
what differs between them is how the session starts, not how its output goes."""

from __future__ import annotations

import time

import pytest

from e2e import Server
from parity import PROMPT, SCRIPTS, LocalPdb, bootstrap_worker, normalise

PAUSE_S = 0.5  # slow_printer.py's default
DONE_LINE = next(number for number, text in enumerate((SCRIPTS / "slow_printer.py").read_text().splitlines(), 1)
                 if text.startswith('print("done")'))  # past the program's own printing
COMMANDS = {  # name: (the line, whether the worker runs under the bootstrap, the script's pause after the stop)
    "pdb_print": (f"!for i in range(3): print('line', i); time.sleep({PAUSE_S})", True, "0"),
    "program_until": (f"until {DONE_LINE}", True, str(PAUSE_S)),
    "program_p": (f"p printer(3, {PAUSE_S})", False, "0"),
}
LIVE_MARGIN_S = 0.6  # of the 3 × PAUSE_S between `line 0` and the end: what meshdbg may take to get it out


def local_shown(line: str, pause: str) -> tuple[str, float]:
    """Local pdb: what `line` shows up to the next prompt, and how long before that prompt
    `line 0` came."""
    with LocalPdb("slow_printer.py", pause) as local:
        for count, typed in enumerate(("import time", line), 1):
            local.wait_for(PROMPT, count)
            local.type(typed)
        local.wait_for(PROMPT, 3)
        text = local.text
        typed_at = text.index(PROMPT, text.index(PROMPT) + 1) + len(PROMPT)
        first, last = text.index("line 0", typed_at) + len("line 0"), text.index(PROMPT, typed_at)
        ahead = local.when(last + 1) - local.when(first)
        local.finish()
    return normalise(text[typed_at:last]), ahead


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_long_commands_lines_come_as_they_are_printed_as_in_local_pdb(server: Server, command: str) -> None:
    line, bootstrap, pause = COMMANDS[command]
    expected, local_ahead = local_shown(line, pause)
    assert local_ahead > 2 * LIVE_MARGIN_S  # the oracle itself shows it early
    worker = (bootstrap_worker(server, "slow_printer.py", pause) if bootstrap else
              server.worker(str(SCRIPTS / "slow_printer.py"), 0, "", pause))
    server.wait_sessions(1)

    async def body(client) -> tuple[str, float]:
        async with client.attach(rank=0) as pdb:
            await pdb.send("import time")
            came: list[str] = []
            seen: list[float] = []

            def arrived(text: str) -> None:
                came.append(text)
                if not seen and "line 0" in "".join(came):
                    seen.append(time.monotonic())

            reply = await pdb.send(line, on_output=arrived)
            ahead = time.monotonic() - seen[0] if seen else 0.0
            assert (await pdb.send("c")).ended
            return "".join(came) + reply.output, ahead

    got, ahead = server.run(body)
    assert normalise(got) == expected
    assert ahead >= LIVE_MARGIN_S, f"`line 0` came {ahead:.2f} s before the reply; local pdb: {local_ahead:.2f} s"
    worker.communicate(timeout=30)
    assert worker.returncode == 0
