"""The differences from local pdb that README documents ("pdb remotely"), each pinned down.

Every one exists so that a remote session never hangs or kills a rank; local pdb is run
beside meshdbg where the contrast is the point.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from e2e import Server
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import UsageError
from meshdbg.wire.vocabulary import EndReason
from parity import SCRIPTS, bootstrap_worker, local_transcript
from watching import watch_until


async def _step_until(pdb, text: str) -> None:
    """`n` until pdb's reply shows `text` (3.13 stops on the breakpoint() line itself, so one more)."""
    for _ in range(3):
        if text in (await pdb.send("n")).output:
            return
    raise AssertionError(f"no {text!r} within 3 steps")


def _start(server: Server, script: str, bootstrap: bool = False) -> None:
    """SCRIPT as a worker (`bootstrap`: as `meshdbg run` runs a rank), stopped at its first breakpoint."""
    if bootstrap:
        bootstrap_worker(server, script)
    else:
        server.worker(str(SCRIPTS / script))
    server.wait_sessions(1)


def test_stepping_off_the_end_ends_the_session_instead_of_entering_threading(server: Server) -> None:
    # (local pdb goes on into threading._shutdown when threading was imported, as it is under pytest)
    _start(server, "run_off_end.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            await _step_until(pdb, "--Return--")
            last = await pdb.send("n")
            assert last.ended and last.reason is EndReason.THREAD_FINISHED
            assert "threading" not in last.output
        assert await client.list() == []

    server.run(body)


def test_a_thread_stepping_off_its_target_ends_its_session_and_the_rank_runs_on(server: Server) -> None:
    _start(server, "thread_body.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            await _step_until(pdb, "--Return--")
            last = await pdb.send("n")
            assert last.ended and last.reason is EndReason.THREAD_FINISHED and last.reason.rank_runs_on
            assert "threading.py" not in last.output
            where = await client.list()
            assert where == []

    server.run(body)


def test_quit_ends_the_session_and_the_rank_goes_on(server: Server) -> None:
    _start(server, "step_basic.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            reply = await pdb.send("q")
            assert reply.ended and reply.reason is EndReason.QUIT and "session ended" in reply.output

    server.run(body)


def test_interact_is_a_remote_console_ended_by_ctrl_d_or_exit(server: Server) -> None:
    _start(server, "interact.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            opened = await pdb.send("interact")
            assert opened.prompt == ">>> " and "interact" in opened.output
            assert (await pdb.send("value * 2")).output == "10\n"
            assert (await pdb.send("print('from the rank')")).output == "from the rank\n"
            assert (await pdb.send("for k in range(2):")).prompt == "... "
            assert (await pdb.send("    print(k)")).prompt == "... "
            assert (await pdb.send("")).output == "0\n1\n"
            assert "ZeroDivisionError" in (await pdb.send("1/0")).output
            back = await pdb.send("", eof=True)  # Ctrl-D
            assert back.prompt == "(Pdb) " and "exit" in back.output
            await pdb.send("interact")
            back = await pdb.send("exit()")
            assert back.prompt == "(Pdb) " and not back.ended
            assert (await pdb.send("p value")).output == "5\n"
            await pdb.send("c")

    server.run(body)


def test_a_silent_stop_shows_where_it_stands_to_a_client_that_did_not_let_it_run(server: Server) -> None:
    """A new stop after `c` is a new session: the client that let the rank run comes back to it
    as local pdb does, silently (test_parity's commands_silent.py), while any other client
    attaching to it is shown where it stands first."""
    _start(server, "commands_silent.py")

    async def body(client: ControlClient) -> str:
        async with client.attach(rank=0) as pdb:
            for line in ["b 3", "commands 1", "silent", "p 'quiet', n", "end"]:
                await pdb.send(line)
            await pdb.send("c")
        await asyncio.sleep(0)
        (session,) = [s for s in await _stopped(client)]
        async with client.attach(session_id=session.id) as again:
            text = again.replay.output
            await again.send("cl 1")
            await again.send("c")
        return text

    text = server.run(body)
    assert text.startswith("> ") and "('quiet', 0)" in text


async def _stopped(client: ControlClient) -> list:
    from watching import watch_until
    return await asyncio.wait_for(watch_until(client, {"stopped": [0]}), 15)


def test_text_a_strict_stdout_refuses_is_escaped_instead_of_killing_the_rank(server: Server) -> None:
    """A UTF-8 terminal's strict stdout: local pdb's `!print` fails with UnicodeEncodeError;
    remotely the text is shown escaped (pdb's own writes must not fail into the rank)."""
    env = {"PYTHONIOENCODING": "utf-8:strict"}
    local = local_transcript("surrogates.py", ["!print(bad)", "c"], env=env)
    assert "UnicodeEncodeError" in local
    server.worker(str(SCRIPTS / "surrogates.py"), env=dict(server.env, **env))
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            assert (await pdb.send("!print(bad)")).output == "\\udcff\n"
            assert (await pdb.send("p bad")).output == "'\\udcff'\n"
            assert (await pdb.send("!print('\\x00\\x1b[2J\\x07ok')")).output == "\x00\x1b[2J\x07ok\n"
            assert (await pdb.send("p 'typed \udcfe'")).output == "'typed \\udcfe'\n"
            big = await pdb.send("p 'x' * 10_000_000")  # one 10 MB line: whole, in chunks; the session goes on
            assert not big.ended and big.output == repr("x" * 10_000_000) + "\n"
            typed = await pdb.send("p len('" + "y" * 1_000_000 + "')")  # a 1 MB typed line
            assert typed.output == "1000000\n"
            with pytest.raises(UsageError, match="limited to 3 MiB of UTF-8"):
                await pdb.send("p '" + "z" * 10_000_000 + "'")
            assert (await pdb.send("p 1 + 1")).output == "2\n"  # the rank is alive
            await pdb.send("c")

    server.run(body)


def test_help_pdb_shows_the_overview_instead_of_pythons_interactive_help(server: Server) -> None:
    _start(server, "help_all.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            assert "The Python Debugger Pdb" in (await pdb.send("help pdb")).output
            await pdb.send("c")

    server.run(body)


@pytest.mark.parametrize("bootstrap", [False, True], ids=["serve", "bootstrap"])
def test_step_onto_a_breakpoint_line_steps_over_it_in_the_same_session(server: Server, bootstrap: bool) -> None:
    """`s` on `breakpoint()`: the breakpoint's new pdb takes over at the next line, in this session
    (local pdb 3.11/3.12 steps into pdb's own set_trace; no session may open inside meshdbg's frames)."""
    if sys.version_info < (3, 13):
        assert "pdb.py" in local_transcript("rebreak_loop.py", ["n", "n", "n", "s", "s", "s", "c", "c", "c"])
    _start(server, "rebreak_loop.py", bootstrap)

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            for command in ("n", "n", "n", "s", "s", "s", "s", "s"):  # into step(), onto its breakpoint() line
                if "-> breakpoint()" in (await pdb.send(command)).output:
                    break
            else:
                raise AssertionError("never reached the breakpoint() line")
            stepped = await pdb.send("s")
            # where the breakpoint's pdb stops, as after `n` (3.13 stops on the breakpoint() line itself)
            landing = "-> breakpoint()\n" if sys.version_info >= (3, 13) else "-> return i\n"
            assert stepped.output.endswith(landing) and stepped.prompt == "(Pdb) " and not stepped.ended
            where = (await pdb.send("where")).output
            assert "pdb.py" not in where and "meshdbg" not in where.replace(str(SCRIPTS), "")
            assert [s.id for s in await client.list()] == [pdb.session.id]  # one session, stopped
            await pdb.send("c")

    server.run(body)


def test_restart_says_it_is_not_available_and_the_session_goes_on(server: Server) -> None:
    _start(server, "step_basic.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            for command in ("restart", "run a b", "restart"):
                reply = await pdb.send(command)
                assert not reply.ended and reply.prompt == "(Pdb) "
                assert reply.output == ("*** run/restart is not available in a remote session (it would end the "
                                        "rank's program); the session goes on\n")
            assert (await pdb.send("p 6 * 7")).output == "42\n"
            await pdb.send("c")

    server.run(body)


def test_assignments_in_interact_stick_as_with_bang(server: Server) -> None:
    """(local pdb's `interact` works on a copy of the namespace and forgets them, as pdb's
    documentation says; before 3.13 its `exit()` ends the program, so only 3.13 shows it here)"""
    if sys.version_info >= (3, 13):
        assert "(Pdb) 41\n" in local_transcript("assign_locals.py", ["interact", "x = 7", "exit()", "p x", "c"])
    _start(server, "assign_locals.py")

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            await pdb.send("interact")
            await pdb.send("x = 7")
            await pdb.send("z = x * 3")
            await pdb.send("", eof=True)
            assert (await pdb.send("p x, z")).output == "(7, 21)\n"
            await _step_until(pdb, "-> print(y")
            assert (await pdb.send("p y")).output == "8\n"  # the program ran on with x = 7
            await pdb.send("c")

    server.run(body)


def test_an_interrupted_command_leaves_the_programs_exit_status_alone(server: Server) -> None:
    """(CPython marks an interpreter whose `eval` of a string raised KeyboardInterrupt to kill
    itself with SIGINT at exit, though pdb caught it: local pdb's program, Ctrl-C'd in `p`, ends
    so on 3.11-3.13, and under `meshdbg run` the launcher would stop the mesh for that rank)"""
    worker = server.worker("hold.py")
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        async with client.attach(rank=0) as pdb:
            command = asyncio.create_task(pdb.send("p sum(k for k in range(10**10))"))
            await asyncio.wait_for(watch_until(client, {"running": [0]}), 10)
            await client.break_in(pdb.session.id)
            assert (await asyncio.wait_for(command, 10)).output.strip() == "*** KeyboardInterrupt"
            assert (await pdb.send("c")).ended  # no other string evaluated before the program ends

    server.run(body)
    out, err = worker.communicate(timeout=30)
    assert (worker.returncode, out.strip()) == (0, "rank 0 continued"), err
