"""Where a session says it stands (the reply's frame, the toolbar, `list`) is where pdb stands,
also inside `debug`, whose own pdb then reads its lines through the session."""

from __future__ import annotations

from e2e import Server
from meshdbg.debugger.control import ControlClient
from parity import SCRIPTS


def test_inside_debug_the_session_stands_where_the_inner_pdb_does(server: Server) -> None:
    server.worker(str(SCRIPTS / "debug_recursive.py"))
    server.wait_sessions(1)

    async def body(client: ControlClient) -> list[tuple[str, int]]:
        (outer,) = await client.list()
        seen = [(outer.function, outer.lineno)]
        async with client.attach(rank=0) as pdb:
            for line in ("debug helper(5)", "s", "n", "c"):  # c: the inner run ends, the outer pdb is back
                reply = await pdb.send(line)
                (listed,) = await client.list()
                assert (listed.function, listed.lineno) == (reply.function, reply.lineno)
                seen.append((reply.function, reply.lineno))
            await pdb.send("c")
        return seen

    outer, inner_start, call, step, back = server.run(body)
    assert outer[0] == "<module>" and inner_start == ("<module>", 1)  # the inner pdb runs `helper(5)` as <string>
    assert (call, step) == (("helper", 2), ("helper", 3)) and back == outer, (outer, inner_start, call, step, back)
