"""The core loop end to end: real `meshdbg serve`, real worker processes, real gRPC."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys

import pexpect
import pytest

from e2e import SCRIPTS, Server, line_of, stop_process, wait_for
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.vocabulary import State
from pty_child import PtyChild

COORDS_2x2 = {0: "hosts=0,gpus=0", 1: "hosts=0,gpus=1", 2: "hosts=1,gpus=0", 3: "hosts=1,gpus=1"}


def start_mesh(server: Server, script: str = "stops.py") -> dict[int, subprocess.Popen]:
    workers = {rank: server.worker(script, rank, COORDS_2x2[rank]) for rank in range(4)}
    server.wait_sessions(4)
    return workers


def by_rank(sessions: list[dict]) -> dict[int, dict]:
    return {s["rank"]: s for s in sessions}


def finish(workers: dict[int, subprocess.Popen]) -> dict[int, str]:
    outputs = {}
    for rank, process in workers.items():
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, err
        outputs[rank] = out
    return outputs


def test_list_shows_every_stopped_worker_with_its_identity_and_position(server: Server) -> None:
    workers = start_mesh(server)
    sessions = by_rank(server.sessions())
    assert sorted(sessions) == [0, 1, 2, 3]
    for rank, session in sessions.items():
        assert session["coords"] == {k: int(v) for k, v in (p.split("=") for p in COORDS_2x2[rank].split(","))}
        assert session["pid"] == workers[rank].pid
        assert session["hostname"] == socket.gethostname()
        assert session["state"] == "stopped"
        assert session["reason"] == "breakpoint"
        assert session["filename"].endswith("stops.py")
    assert sessions[0]["function"] == "stop_zero"
    assert sessions[1]["function"] == "stop_one"
    assert sessions[2]["function"] == sessions[3]["function"] == "stop_other"
    # breakpoint() stops on the line after the call, as local pdb does; each function differs
    returns = [n for n, text in enumerate((SCRIPTS / "stops.py").read_text().splitlines(), 1) if "return value" in text]
    assert [sessions[r]["lineno"] for r in (0, 1, 2)] == returns
    table = server.cli("list")
    assert table.returncode == 0
    assert "hosts=1,gpus=0" in table.stdout and "stop_other" in table.stdout


def test_attach_steps_detach_and_replays_last_output(server: Server) -> None:
    start_mesh(server)
    result = server.cli("attach", "1", input="n\nn\nn\nn\ndetach\n")
    assert result.returncode == 0, result.stderr
    assert "attached to rank 1" in result.stdout
    last_output = result.stdout.split("(Pdb) ")[-2]  # pdb's reply to the fourth `n`
    assert "work(rank)" in last_output or "result" in last_output
    again = server.cli("attach", "1", input="detach\n")
    assert again.returncode == 0
    assert last_output.strip() in again.stdout
    session = by_rank(server.sessions())[1]
    assert session["function"] == "<module>"
    assert session["lineno"] == line_of("stops.py", "result = work(rank)") + 1


def test_cast_moves_exactly_the_selected_ranks(server: Server) -> None:
    start_mesh(server)
    before = by_rank(server.sessions())
    for _ in range(2):  # `--Return--` first, then the caller's next line
        moved = server.cli("cast", "ranks(0,3)", "n")
        assert moved.returncode == 0, moved.stderr
    after = by_rank(server.sessions())
    assert [r for r in range(4) if after[r]["function"] != before[r]["function"] or after[r]["lineno"] != before[r]["lineno"]] == [0, 3]
    values = server.cli("cast", "--json", "ranks(hosts=1)", "p rank")
    assert values.returncode == 0, values.stderr
    parsed = json.loads(values.stdout)
    assert [(r["rank"], r["output"].strip()) for r in parsed] == [(2, "2"), (3, "3")]


def test_cast_groups_identical_output(server: Server) -> None:
    start_mesh(server)
    result = server.cli("cast", "all", "p rank < 2")
    assert result.returncode == 0
    assert "ranks 0-1 (2 ranks):\n  True" in result.stdout
    assert "ranks 2-3 (2 ranks):\n  False" in result.stdout


def test_a_cast_that_leaves_ranks_at_another_prompt_says_so(server: Server) -> None:
    """`cast all interact`, `cast all cl`: the ranks then read at `>>> ` or at the question,
    and the next cast goes there: said under their output (nothing said it)."""
    start_mesh(server)
    asked = server.cli("cast", "all", "cl")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == ("ranks 0-3 (4 ranks):\n  (no output)\n"
                            "  (now at the prompt 'Clear all breaks? ': the next line cast there answers it)\n")
    answered = server.cli("cast", "all", "n")
    assert answered.stdout == "ranks 0-3 (4 ranks):\n  (no output)\n", answered.stdout  # back at (Pdb): nothing said
    python = server.cli("cast", "ranks(hosts=0)", "interact")
    assert "(now at the prompt '>>> ': the next line cast there answers it)" in python.stdout, python.stdout
    in_python = server.cli("cast", "ranks(hosts=0)", "rank * 100").stdout  # Python's, in interact
    assert "rank 0:\n  0\n" in in_python and "rank 1:\n  100\n" in in_python, in_python
    assert server.cli("continue").returncode == 0  # (interact left, then continued)


def test_continue_releases_everyone_and_workers_finish(server: Server) -> None:
    workers = start_mesh(server)
    result = server.cli("continue")
    assert result.returncode == 0, result.stderr
    assert "resumed 4 sessions" in result.stdout
    outputs = finish(workers)
    for rank, text in outputs.items():
        assert f"result {rank * 10 + 2}" in text
    assert server.sessions() == []


def test_continue_a_selection_leaves_the_others_stopped(server: Server) -> None:
    workers = start_mesh(server)
    assert server.cli("continue", "ranks(hosts=0)").returncode == 0
    finish({0: workers[0], 1: workers[1]})
    assert sorted(by_rank(server.sessions())) == [2, 3]


async def _drive(client: ControlClient, lines: list[str], rank: int = 0) -> list[str]:
    async with client.attach(rank=rank) as pdb:
        return [(await pdb.send(line)).output for line in lines]


async def _replay(client: ControlClient, rank: int = 0) -> str:
    """What attaching to `rank` shows first."""
    async with client.attach(rank=rank) as pdb:
        return pdb.replay.output


def test_pdb_commands_work_remotely(server: Server) -> None:
    worker = server.worker("stops.py", 0, "hosts=0,gpus=0")
    server.wait_sessions(1)
    outputs = server.run(_drive, ["p value", "pp {'a': [1, 2]}", "w", "l", "ll", "display value",
                                  "r", "n", "s", "bt", "help interact", "clear", "y", "u", "d"])
    p, pp, where, listing, longlist, display, ret, nxt, step, bt, interact, _, clear, up, down = outputs
    assert p.strip() == "'zero'"
    assert pp.strip() == "{'a': [1, 2]}"
    assert "stop_zero()" in where and "->" in where
    assert "breakpoint()" in listing
    assert "def stop_zero():" in longlist
    assert "display value: 'zero'" in display
    assert "--Return--" in ret
    assert "result = work(rank)" in nxt
    assert "work()" in step
    assert "work()" in bt and "<module>()" in bt
    assert "interactive interpreter" in interact  # (interact itself: tests/parity/test_documented_differences.py)
    assert "***" not in clear
    assert "<module>()" in up
    assert "work()" in down
    server.cli("continue")
    out, _ = worker.communicate(timeout=20)
    assert "result 2" in out


def test_breakpoint_then_continue_stops_again_in_a_new_session(server: Server) -> None:
    worker = server.worker("loop.py", 5, "pp=1")
    first = server.wait_sessions(1)[0]
    target = line_of("loop.py", "target of")
    outputs = server.run(_drive, [f"b loop.py:{target}", "c"], 5)
    assert "Breakpoint 1" in outputs[0]
    second = wait_for(lambda: [s for s in server.sessions() if s["lineno"] == target], what="a stop at the breakpoint")[0]
    assert second["id"] != first["id"] and second["rank"] == 5
    # clear with no argument asks in the session, as local pdb asks its terminal (not the worker's)
    question, answer = server.run(_drive, ["clear", "y"], 5)
    assert question == "" and "Deleted" in answer
    assert server.cli("continue").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0, err
    assert "total 3" in out


def test_each_quit_is_answered_by_its_own_reply_with_its_output(server: Server) -> None:
    """The server announces a session's end to its attached clients; a `q` of the client's own
    is answered by its reply instead, which carries what pdb said. The announcement taken for
    that reply left `q` with no output: 2 in 1,000 quits on a loaded machine (CI saw it)."""
    server.worker("stop_forever.py", 1)

    async def quit_again_and_again(client: ControlClient) -> list[str]:
        outputs = []
        for _ in range(40):
            deadline = asyncio.get_running_loop().time() + 20
            while not any(s.state is State.STOPPED for s in await client.list()):
                assert asyncio.get_running_loop().time() < deadline, "the worker did not stop again"
                await asyncio.sleep(0.01)
            async with client.attach(rank=1) as pdb:
                outputs.append((await pdb.send("q")).output)
        return outputs

    outputs = server.run(quit_again_and_again)
    assert all("meshdbg: session ended; this rank continues" in output for output in outputs), outputs


def test_server_side_continue_keeps_breakpoints_and_clear_drops_them(server: Server) -> None:
    worker = server.worker("loop.py", 0)
    server.wait_sessions(1)
    target = line_of("loop.py", "target of")
    server.run(_drive, [f"b loop.py:{target}"])
    assert server.cli("continue").returncode == 0
    (stop,) = server.wait_sessions(1)  # the breakpoint stays, as after `c` in local pdb
    assert stop["lineno"] == target
    assert server.cli("continue", "--clear", "0").returncode == 0
    out, _ = worker.communicate(timeout=20)
    assert worker.returncode == 0 and "total 3" in out


@pytest.mark.parametrize("nested", [["commands 1", "p ('kept', step)"], ["interact", "x = 1"], ["debug len('abc')", "s"],
                                    ["clear"]], ids=["commands", "interact", "debug", "clear's question"])
def test_continue_resumes_a_rank_left_at_a_prompt_inside_a_command(server: Server, nested: list[str]) -> None:
    """A console detached at `(com)`, `>>>`, the recursive debugger's prompt or `clear`'s
    question, then `meshdbg continue`: the rank runs (the question unanswered: no). (`continue` was typed into that prompt: it ended the commands
    block, or failed in interact, and the rank stayed stopped while `continue` said it resumed.)"""
    worker = server.worker("loop.py", 0)
    server.wait_sessions(1)
    target = line_of("loop.py", "target of")
    server.run(_drive, [f"b loop.py:{target}", *nested])  # then detached, the prompt still open
    result = server.cli("continue")
    assert result.returncode == 0 and "resumed 1 session" in result.stdout, result.stderr
    wait_for(lambda: [s for s in server.sessions() if s["lineno"] == target], what="the stop at the breakpoint")
    if nested[0].startswith("commands"):  # the block as typed so far, run at the stop
        assert "('kept', 0)" in server.run(_replay)
    assert server.cli("continue", "--clear", "0").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0 and "total 3" in out, err


def test_quit_ends_the_session_and_the_worker_continues(server: Server) -> None:
    worker = server.worker("stops.py", 1)
    server.wait_sessions(1)
    reply = server.run(_drive, ["q"], 1)
    assert "session ended" in reply[0]
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0, err
    assert "rank 1 label one result 12" in out


def test_killed_worker_disappears_and_attached_client_is_told(server: Server) -> None:
    victim = server.worker("stops.py", 2, "hosts=1,gpus=0")
    server.wait_sessions(1)

    async def attach_then_kill(client: ControlClient) -> str:
        async with client.attach(rank=2) as pdb:
            victim.send_signal(signal.SIGKILL)
            return (await pdb.wait_ended()).reason

    reason = server.run(attach_then_kill)
    assert "went away" in reason
    wait_for(lambda: server.sessions() == [], timeout=2, what="the killed worker to leave the list")
    stop_process(victim)


def test_two_threads_give_two_sessions(server: Server) -> None:
    worker = server.worker("threads.py", 0)
    sessions = server.wait_sessions(2)
    assert {s["thread"] for s in sessions} == {"worker-0", "worker-1"}
    assert len({s["thread_id"] for s in sessions}) == 2
    outputs = server.cli("cast", "--json", "all", "p mine")
    assert sorted(r["output"].strip() for r in json.loads(outputs.stdout)) == ["0", "100"]
    assert server.cli("continue").returncode == 0
    out, _ = worker.communicate(timeout=20)
    assert "all threads done" in out and worker.returncode == 0


def test_stepping_off_the_end_of_a_thread_ends_its_session(server: Server, tmp_path) -> None:
    flag = tmp_path / "done"
    worker = server.worker("thread_steps.py", 0, "", str(flag))
    (session,) = server.wait_sessions(1)
    assert session["thread"] == "stepper"

    async def step_until_ended(client: ControlClient) -> tuple[int, str]:
        async with client.attach(rank=0) as pdb:
            for steps in range(1, 200):
                reply = await pdb.send("n")
                if reply.ended:
                    return steps, reply.reason
        return steps, "still running"

    steps, reason = server.run(step_until_ended)
    assert reason == "the thread finished", (steps, reason)
    assert worker.poll() is None  # the process lives on; only the thread ended
    wait_for(lambda: server.sessions() == [], what="the session to leave the list")
    flag.touch()
    out, _ = worker.communicate(timeout=20)
    assert "thread value 7" in out and "thread joined" in out


@pytest.mark.parametrize("fork_support", ["default", "1"])
def test_a_forked_child_opens_its_own_session(server: Server, fork_support: str) -> None:
    """Also with gRPC's Python fork support on, whose forked child drains its parent's calls
    through each channel's queue (the main thread's polled stream is not taken then:
    meshdbg.worker.polled; the child hung in `fork` when it was)."""
    env = dict(server.env, GRPC_ENABLE_FORK_SUPPORT=fork_support) if fork_support != "default" else None
    worker = server.worker("forks.py", 4, env=env)
    (parent,) = server.wait_sessions(1)
    assert server.cli("continue").returncode == 0
    # (0.1-2 s alone; twice past 10 s in a full run of the suite on 2 cores: the worker's own
    # words are shown if it ever takes longer than this)
    try:
        (child,) = wait_for(lambda: [s for s in server.sessions() if s["pid"] != parent["pid"]
                                     and s["state"] == "stopped"], 30, what="the child's session")
    except AssertionError:
        stop_process(worker)
        raise AssertionError(f"no session of the child; the worker said: {worker.communicate(timeout=10)}") from None
    assert child["rank"] == 4
    assert "'child'" in server.cli("cast", "all", "p role").stdout
    assert server.cli("continue").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0 and "parent done" in out, err


@pytest.mark.parametrize("fork_support", ["0", "false"])
def test_a_forked_child_says_at_once_why_it_cannot_stop_when_grpc_fork_support_is_off(server: Server,
                                                                                    fork_support: str) -> None:
    """gRPC turned off for forks leaves a child of a process that used it without gRPC: its
    first call waits for good, so its breakpoint held it for the reconnect window and then went
    on with a misleading "no server reachable". It goes on at once, saying why."""
    worker = server.worker("forks.py", 4, env=dict(server.env, GRPC_ENABLE_FORK_SUPPORT=fork_support,
                                                   MESHDBG_RECONNECT_S="60"))
    server.wait_sessions(1)
    assert server.cli("continue").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0 and "parent done" in out, err
    assert (f"meshdbg: this forked child cannot reach the server: GRPC_ENABLE_FORK_SUPPORT={fork_support} "
            f"leaves gRPC unusable after a fork (leave it unset to debug forked children)\n") in err, err
    assert "no terminal for local pdb; continuing" in err and "Traceback" not in err


def test_unknown_rank_and_bad_selection_are_clear_errors(server: Server) -> None:
    start_mesh(server)
    bad = server.cli("cast", "ranks(hosts=1, gpus=x)", "p 1")
    assert bad.returncode == 2
    assert "bad selection" in bad.stderr and "^" in bad.stderr and "Traceback" not in bad.stderr
    nothing = server.cli("cast", "ranks(7)", "p 1")
    assert nothing.returncode == 1 and "no session matches ranks(7) (there are ranks 0-3)" in nothing.stderr, \
        nothing.stderr  # as `attach 7` names the ranks there are
    for verb in (["cast"], ["compare"], ["stacks"], ["interrupt"], ["pipeline"], ["break"], ["continue"]):
        args = {"cast": ["p 1"], "compare": ["rank"], "break": ["W"]}.get(verb[0], [])
        typo = server.cli(*verb, "ranks(gpu=1)", *args)  # every verb that selects names the typo alike
        assert typo.returncode == 1 and "matches ranks(gpu=1) (unknown dimension gpu; known: gpus, hosts)" in typo.stderr, \
            (verb, typo.stderr)
    failing = server.cli("cast", "all", "p undefined_name")
    assert failing.returncode == 1 and "NameError" in failing.stdout
    attach = server.cli("attach", "9", input="")
    assert attach.returncode == 1 and "no session for rank 9" in attach.stderr
    for typo in ("²", "99999999999", "#x"):
        attach = server.cli("attach", typo, input="")
        assert attach.returncode == 2 and "attach needs a rank" in attach.stderr and "Traceback" not in attach.stderr
    assert len(server.sessions()) == 4  # nothing was lost


def test_wrong_or_missing_token_is_refused(server: Server) -> None:
    wrong = dict(server.env, MESHDBG_TOKEN="not-the-token")
    result = server.cli("list", env=wrong)
    assert result.returncode == 3 and "refused our token" in result.stderr
    missing = {k: v for k, v in server.env.items() if k != "MESHDBG_TOKEN"}
    missing["MESHDBG_CONNECTION_FILE"] = "/nonexistent/conn.json"
    missing["MESHDBG_ADDR"] = server.addr
    result = server.cli("list", env=missing)
    assert result.returncode == 3 and "MESHDBG_TOKEN" in result.stderr
    worker = server.worker("stops.py", 0, env=wrong)
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0 and "refused our token" in err and "result 2" in out


def test_no_server_exit_3(tmp_path) -> None:
    env = {"MESHDBG_CONNECTION_FILE": str(tmp_path / "none.json"), "PATH": "/usr/bin:/bin"}
    import os
    import sys

    result = subprocess.run([sys.executable, "-m", "meshdbg", "list"], env=dict(os.environ, **env),
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 3 and "no meshdbg server found" in result.stderr
    assert "Traceback" not in result.stderr


def test_worker_without_a_reachable_server_continues(server: Server, tmp_path) -> None:
    addr = server.addr
    server.process.terminate()
    server.process.communicate(timeout=10)
    env = dict(server.env, MESHDBG_ADDR=addr)
    worker = server.worker("stops.py", 0, env=env)
    out, err = worker.communicate(timeout=20)
    assert worker.returncode == 0
    assert "no meshdbg server reachable" in err and "continuing" in err
    assert "result 2" in out


def test_worker_without_a_server_falls_back_to_local_pdb_on_a_terminal(server: Server) -> None:
    addr = server.addr
    server.process.terminate()
    server.process.communicate(timeout=10)
    env = dict(server.env, MESHDBG_ADDR=addr, MESHDBG_RANK="0", PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
    child = PtyChild([sys.executable, str(SCRIPTS / "stops.py")], env=env, timeout=20)
    child.expect("using local pdb")
    child.expect(r"\(Pdb\) ")
    child.sendline("p value")
    child.expect("'zero'")
    child.sendline("c")
    child.expect("result 2")
    child.expect(pexpect.EOF)
