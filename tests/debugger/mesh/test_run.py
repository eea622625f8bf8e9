"""`meshdbg run` end to end: real worker processes, real gRPC, the real CLI."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e import wait_for
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.run import Interrupted, unless_interrupted
from mesh_helpers import SCRIPTS, all_in, list_workers, parent_pid, pid_gone, start_run

PREFIX = re.compile(r"^\[r(\d+) hosts=(\d),gpus=(\d)\] ")


def test_ranks_env_and_prefixed_output(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "hosts=2,gpus=3", "report.py")
    code, out, err = run.finish()
    assert code == 0, err
    envs = {}
    for stream, text in (("out", out), ("err", err)):
        for line in text.splitlines():
            if line.startswith("meshdbg:"):
                continue
            match = PREFIX.match(line)
            assert match, f"unprefixed {stream} line: {line[:80]!r}"
            rank, host, gpu = map(int, match.groups())
            assert rank == host * 3 + gpu  # row-major, last dimension fastest
            body = line[match.end():]
            if body.startswith("ENV "):
                envs[rank] = dict(item.split("=", 1) for item in body[4:].split(" "))
            elif body.startswith(("out ", "err ")):
                kind, who, _, payload = body.split(" ", 3)
                assert kind == stream and who == str(rank) and payload == str(rank) * 300, "interleaved line"
    assert sorted(envs) == list(range(6))
    ports = {env["MASTER_PORT"] for env in envs.values()}
    assert len(ports) == 1 and int(ports.pop()) > 0
    for rank, env in envs.items():
        assert env["MESHDBG_RANK"] == env["RANK"] == str(rank)
        assert env["MESHDBG_COORDS"] == f"hosts={rank // 3},gpus={rank % 3}"
        assert env["LOCAL_RANK"] == str(rank % 3) and env["WORLD_SIZE"] == "6"
        assert env["MESHDBG_NAME"] == "worker" and env["MASTER_ADDR"] == "127.0.0.1"
    assert out.count("ADDR yes") == 6
    assert sum(line.endswith("] no newline at the end") for line in out.splitlines()) == 6


def test_module_target_and_usage_errors(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "pp=2", "-m", "meshpkg.main", "--lr", "3e-4")
    code, out, err = run.finish()
    assert code == 0, err
    assert "[r1 pp=1] module __main__ pp=1 ['--lr', '3e-4']" in out.splitlines()
    for args, message in ((["--mesh", "hosts=x", "report.py"], "bad --mesh 'hosts=x'"),
                          (["--mesh", "hosts=0", "report.py"], "bad mesh size hosts=0"),
                          (["missing.py"], "no such script: missing.py"),
                          (["-m", "nosuchmodule.main"], "no module named nosuchmodule"),
                          (["-c"], "-c needs code"),
                          (["-c", "x = (", "a"], "-c: '(' was never closed"),
                          ([str(tmp_path)], "it has no __main__.py")):
        code, out, err = start_run(tmp_path, *args).finish()
        assert code == 2 and err.startswith("meshdbg: ") and message in err and "Traceback" not in err, err


WHEREAMI_CODE = "exec(open('whereami.py').read().replace('__file__', 'None'))"  # (python -c has no __file__)


@pytest.mark.parametrize("target", [["whereami.py"], ["-m", "whereami"], ["-c", WHEREAMI_CODE, "a"]],
                         ids=["script", "-m", "-c"])
def test_a_target_given_relatively_sees_what_python_shows_it(tmp_path: Path, target: list[str]) -> None:
    """Differential, against `python TARGET` in the same folder: `__file__`, the code's
    filename in tracebacks and pdb's positions, sys.argv[0] and sys.path[0]."""
    local = subprocess.run([sys.executable, *target], capture_output=True, text=True, cwd=SCRIPTS, timeout=60)
    code, out, err = start_run(tmp_path, "--no-post-mortem", "--mesh", "procs=1", *target).finish()
    assert code == local.returncode == 1, err
    assert [line.removeprefix("[r0 procs=0] ") for line in out.splitlines()] == local.stdout.splitlines()
    assert f"[r0 procs=0] {local.stderr.strip()}" in err.splitlines(), err
    if target[0] != "-c":
        assert f"file {SCRIPTS / 'whereami.py'}" in local.stdout.splitlines()  # absolute, as Python 3.9+ makes it


@pytest.mark.parametrize("target", [["late_pickle.py"], ["-m", "late_pickle"]], ids=" ".join)
def test_a_thread_outliving_the_script_still_finds_its_classes_in_main(tmp_path: Path, target: list[str]) -> None:
    """Differential: the script's module stays __main__ after its code returns (runpy put the
    launcher's back, and pickling a class of the script's failed in its threads)."""
    local = subprocess.run([sys.executable, *target], capture_output=True, text=True, cwd=SCRIPTS, timeout=60)
    assert local.stdout == "pickled Kept\n", local
    code, out, err = start_run(tmp_path, "--mesh", "procs=1", *target).finish()
    assert code == 0 and out == "[r0 procs=0] pickled Kept\n", (out, err)


def test_directory_and_zip_file_targets_run_their_main(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "__main__.py").write_text("import os\nprint('main of rank', os.environ['RANK'])\n")
    archive = shutil.make_archive(str(tmp_path / "app"), "zip", app)
    for target in (str(app), archive):
        code, out, err = start_run(tmp_path, "--mesh", "procs=2", target).finish()
        assert code == 0, err
        assert "[r1 procs=1] main of rank 1" in out.splitlines(), out


def test_ctrl_c_cancels_what_the_run_waits_for() -> None:
    async def main() -> None:
        interrupted = asyncio.Event()
        assert await unless_interrupted(asyncio.sleep(0, "ready"), interrupted) == "ready"
        never = asyncio.ensure_future(asyncio.Event().wait())  # like a rank that never registers
        asyncio.get_running_loop().call_soon(interrupted.set)
        with pytest.raises(Interrupted):
            await unless_interrupted(never, interrupted)
        await asyncio.wait([never])
        assert never.cancelled()

    asyncio.run(main())


def test_list_all_states_and_interrupt(tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    run = start_run(tmp_path, "--keep-going", "--mesh", "procs=4", "states.py", str(flag))
    try:
        workers = run.wait_workers(lambda w: len(w) == 4 and w[0]["state"] == w[1]["state"] == "exited"
                                   and w[2]["state"] == "stopped" and w[3]["state"] == "running", "the four states")
        assert workers[0]["exit_code"] == 3 and workers[0]["signal"] is None
        assert workers[1]["signal"] == signal.SIGKILL and workers[1]["exit_code"] is None
        assert workers[2]["reason"] == "breakpoint" and workers[2]["filename"].endswith("states.py")
        assert workers[3]["coords"] == {"procs": 3} and workers[3]["launcher"] == "meshdbg"
        table = run.cli("list", "--all").stdout
        assert "SIGKILL" in table and "stopped" in table and "running" in table

        async def interrupt() -> list[int]:
            async with ControlClient(run.connection()) as client:
                return await client.interrupt("all")

        assert asyncio.run(interrupt()) == [3]  # only running ranks are asked
        workers = run.wait_workers(lambda w: w[3]["state"] == "stopped", "rank 3 interrupted")
        assert workers[3]["reason"] == "interrupt" and workers[3]["filename"].endswith("states.py")

        async def first_words() -> str:
            async with ControlClient(run.connection()) as client, client.attach(rank=3) as pdb:
                return pdb.replay.output

        # local pdb's words on Ctrl-C after `c` (Pdb.sigint_handler), above the position
        assert asyncio.run(first_words()).startswith("\nProgram interrupted. (Use 'cont' to resume).\n> ")
        assert run.cli("continue").returncode == 0
        flag.write_text("")
        code, out, err = run.finish()
        assert code in (3, 128 + signal.SIGKILL), err  # the first failing rank's status (rank 0 or 1)
        assert "[r2 procs=2] rank 2 continued" in out and "[r3 procs=3] rank 3 done" in out
        assert "meshdbg: rank 2 (procs=2) stopped at states.py" in err and "meshdbg attach 2" in err
    finally:
        run.kill()


def test_post_mortem_then_continue_exits_non_zero(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "procs=3", "crash.py")
    try:
        workers = run.wait_workers(lambda w: w.get(1, {}).get("state") == "stopped", "the post-mortem session")
        assert workers[1]["reason"] == "post-mortem" and workers[1]["function"] == "compute"
        assert workers[1]["filename"] == str(SCRIPTS / "crash.py")  # as pdb's `where` shows it (was "crash.py")
        (crashed,) = json.loads(run.cli("stacks", "--json", "1").stdout)  # where it crashed, not the handler
        assert [(f["function"], f["lineno"]) for f in crashed["frames"]] == [("<module>", 11), ("compute", 7)]
        assert crashed["states"] == {"stopped": [1]}
        sessions = run.cli("cast", "--json", "1", "p rank").stdout
        assert '"output": "1\\n"' in sessions
        assert run.cli("continue").returncode == 0
        code, out, err = run.finish()
        assert code == 1
        assert "[r1 procs=1] ZeroDivisionError: rank 1 divides by zero" in err
        # how the others ended, which the console may not have had time to announce
        # (it said "the mesh was stopped" of ranks that had ended before the failure)
        assert "meshdbg: rank 1 failed first (exit status 1); the other ranks had ended: ranks 0,2 status 0" in err
        assert "runpy" not in err and "bootstrap" not in err
    finally:
        run.kill()


def test_a_post_mortem_no_client_comes_to_ends_after_its_wait_and_the_job_fails(tmp_path: Path) -> None:
    """Without a terminal no console opens: a crashed rank's post-mortem held the job (and the
    others' machines) for good when no one came. It says, as it crashes, how long it waits for
    a client (`--post-mortem-wait`), then ends, and the rank fails as without one."""
    code, _, err = start_run(tmp_path, "--post-mortem-wait", "1", "--mesh", "procs=3", "crash.py").finish()
    assert code == 1, err
    assert "meshdbg attach 1 (within 1 s, or it ends: --post-mortem-wait)" in err
    assert "meshdbg: no client came to rank 1's post-mortem in 1 s; it ends" in err
    assert "meshdbg: rank 1 failed first (exit status 1); the other ranks had ended: ranks 0,2 status 0" in err


def test_a_post_mortem_the_program_asks_for_is_a_stop_not_a_crash(tmp_path: Path) -> None:
    """`except: pdb.post_mortem()` in a rank is the program's own stop, as a breakpoint() is:
    announced as a stop (it was "rank 1 crashed: post-mortem at ..."), held for a client past
    the crash's --post-mortem-wait (it was ended after it, "and the rank fails as without
    one", though the rank then went on and exited 0), and the rank goes on once continued."""
    run = start_run(tmp_path, "--post-mortem-wait", "1", "--mesh", "procs=2", "pdb_post_mortem.py")
    try:
        workers = run.wait_workers(lambda w: all(w.get(r, {}).get("state") == "stopped" for r in (0, 1)),
                                   "both ranks in their post-mortem")
        assert {workers[r]["reason"] for r in (0, 1)} == {"pdb.post_mortem"}
        time.sleep(POST_MORTEM_ATTACHED_S)  # the fault: past the crash's wait, no client
        assert all(w["state"] == "stopped" for w in list_workers(run.cli))  # still held
        assert run.cli("cast", "all", "p scale").returncode == 0
        assert run.cli("continue").returncode == 0
        code, out, err = run.finish()
        assert code == 0, err
        assert "crashed" not in err and "no client came" not in err, err
        assert "stopped at pdb_post_mortem.py:8 step (pdb.post_mortem)" in err, err
        assert "rank 0 went on" in out and "rank 1 went on" in out
    finally:
        run.kill()


def test_a_post_mortem_stays_while_a_client_is_attached_and_waits_again_once_it_leaves(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--post-mortem-wait", "2", "--mesh", "procs=3", "crash.py")
    try:
        run.wait_workers(lambda w: w.get(1, {}).get("state") == "stopped", "the post-mortem session")

        async def examine() -> None:
            async with ControlClient(run.connection()) as client, client.attach(rank=1) as pdb:
                await asyncio.sleep(POST_MORTEM_ATTACHED_S)  # the fault: attached past the wait, typing nothing
                assert (await pdb.send("p rank")).output == "1\n"  # still in its post-mortem

        asyncio.run(examine())
        assert run.process.poll() is None  # left now: the wait starts again
        code, _, err = run.finish()
        assert code == 1, err
        assert "no client came to rank 1's post-mortem in 2 s; it ends" in err
    finally:
        run.kill()


POST_MORTEM_ATTACHED_S = 4.0  # past the run's --post-mortem-wait of 2 s (and its check, each second)


def test_no_post_mortem_and_failing_rank_stops_the_mesh(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--no-post-mortem", "--mesh", "procs=3", "forever.py", "-1")
    pids = []
    try:
        workers = run.wait_workers(all_in("running", 3), "three running ranks")
        pids = [w["pid"] for w in workers.values()]
        run.process.send_signal(signal.SIGINT)
        code, _, err = run.finish()
        assert code == 130 and "interrupted" in err
        wait_for(lambda: all(pid_gone(pid) for pid in pids), 10, "every worker gone after Ctrl-C")
    finally:
        run.kill()
    code, _, err = start_run(tmp_path, "--no-post-mortem", "--mesh", "procs=3", "forever.py", "1").finish()
    assert code == 5, err


def test_a_failing_rank_stops_the_mesh_once_the_paused_rank_someone_debugs_goes_on(tmp_path: Path) -> None:
    """Rank 0 is paused, a client attached to it, when rank 1 fails: the mesh is not stopped
    under it (SIGTERM took the state someone was debugging); it is once rank 0 goes on."""
    flag = tmp_path / "fail now"
    run = start_run(tmp_path, "--no-post-mortem", "--mesh", "procs=3", "fails_while_paused.py", str(flag))

    async def debug_rank_0() -> tuple[dict[int, dict], str, bool]:
        async with ControlClient(run.connection()) as client, client.attach(rank=0) as pdb:
            flag.touch()
            workers = await asyncio.to_thread(run.wait_workers, lambda w: w[1]["state"] == "exited", "rank 1 failed")
            value = (await pdb.send("p value")).output  # still paused, and answering
            return workers, value, (await pdb.send("c")).ended

    try:
        run.wait_workers(lambda w: len(w) == 3 and w[0]["state"] == "stopped", "rank 0 paused")
        workers, value, ended = asyncio.run(debug_rank_0())
        code, out, err = run.finish()
    finally:
        run.kill()
    assert workers[0]["state"] == "stopped" and workers[2]["state"] == "running", workers
    assert value == "'kept'\n" and ended
    assert code == 3, err
    assert ("meshdbg: rank 1 failed (exit status 3); the mesh stops once rank 0, paused in pdb, goes on "
            "(continue or quit there; `stop` ends the job now)") in err, err
    # (rank 0, let go, is stopped with the rest: SIGTERM, or status 0 if it ended first)
    assert re.search(r"meshdbg: rank 1 failed first \(exit status 3\); the mesh was stopped: .*\b2 SIGTERM", err), err


def test_a_rank_paused_again_keeps_holding_the_mesh_after_the_others_go_on(tmp_path: Path) -> None:
    """Ranks 0 and 2 are paused when rank 1 fails. Rank 0 goes on and stops at its next
    breakpoint while rank 2 still holds the mesh; when rank 2 goes on, rank 0 is paused again
    and the mesh waits for it too. (Found by hand: the mesh waited only for the stops of the
    moment of the failure, and SIGTERM took rank 0 from under its second breakpoint.)"""
    flag = tmp_path / "fail now"
    run = start_run(tmp_path, "--no-post-mortem", "--mesh", "procs=3", "fails_while_paused.py", str(flag), "again")

    async def let_go(rank: int) -> bool:
        async with ControlClient(run.connection()) as client, client.attach(rank=rank) as pdb:
            return (await pdb.send("c")).ended

    def value_of_rank_0() -> str:
        cast = run.cli("cast", "--json", "0", "p value")
        return json.loads(cast.stdout)[0]["output"] if cast.returncode == 0 else cast.stdout + cast.stderr

    try:
        run.wait_workers(lambda w: len(w) == 3 and w[0]["state"] == w[2]["state"] == "stopped", "ranks 0 and 2 paused")
        flag.touch()
        run.wait_workers(lambda w: w[1]["state"] == "exited", "rank 1 failed")
        assert asyncio.run(let_go(0))
        wait_for(lambda: value_of_rank_0() == "'kept again'\n", 15, "rank 0 paused at its second breakpoint")
        assert asyncio.run(let_go(2))
        answers = [value_of_rank_0() for _ in range(3)]  # paused still, the mesh held for it
        assert answers == ["'kept again'\n"] * 3, answers
        assert asyncio.run(let_go(0))
        code, out, err = run.finish()
    finally:
        run.kill()
    assert code == 3, err
    assert ("meshdbg: rank 1 failed (exit status 3); the mesh stops once ranks 0, 2, paused in pdb, go on "
            "(continue or quit there; `stop` ends the job now)") in err, err


def test_sigkill_of_the_launcher_leaves_no_worker(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "procs=4", "forever.py", "-1")
    try:
        workers = run.wait_workers(all_in("running", 4), "four running ranks")
        pids = [w["pid"] for w in workers.values()]
        run.process.kill()
        wait_for(lambda: all(pid_gone(pid) for pid in pids), 10, "every worker gone after SIGKILL")
    finally:
        run.kill()


def test_death_of_the_fork_server_ends_the_run(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "procs=2", "forever.py", "-1")
    try:
        workers = run.wait_workers(all_in("running", 2), "two running ranks")
        pids = [w["pid"] for w in workers.values()]
        zygote = parent_pid(pids[0])
        assert parent_pid(zygote) == run.process.pid
        os.kill(zygote, signal.SIGKILL)
        code, _, err = run.finish(timeout=15)
        assert code == 128 + signal.SIGKILL, err  # its ranks died with it, as if killed
        assert not Path(run.env["MESHDBG_CONNECTION_FILE"]).exists()
        wait_for(lambda: all(pid_gone(pid) for pid in pids), 10, "every worker gone with the fork server")
    finally:
        run.kill()


@pytest.mark.torch
def test_torch_distributed_initialises_unchanged(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    code, out, err = start_run(tmp_path, "--mesh", "gpus=2", "dist.py").finish(timeout=60)
    assert code == 0, err
    assert out.count("sum 3 world 2") == 2
