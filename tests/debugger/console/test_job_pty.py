"""`meshdbg run` in a pseudo-terminal, as a person drives it: start, stop, step, end the job.

Every wait is pexpect's expect on what the person would see (or the process's end).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from e2e import wait_for
from pty_child import PtyChild

HERE = Path(__file__).parent
JOB = HERE / "run_job.py"
WAIT_S = 20.0
TOP = re.escape("meshdbg>")
RANK0 = re.escape("(Pdb r0 hosts=0,gpus=0)")
HIGHLIGHT_END = r"(\x1b\[[0-9;]*m)+"  # where a Ctrl-R search's highlighted match ends, as drawn
NOISE = ("Traceback", "CancelledError", "no session for", "\x1b[45;1R", "never awaited", "RuntimeWarning")


@pytest.fixture
def env(tmp_path: Path, private_runtime_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    env.update(MESHDBG_RUNTIME_DIR=str(private_runtime_dir), MESHDBG_HISTORY=str(tmp_path / "history"),
               NO_COLOR="1", TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1", PYTHONUNBUFFERED="1")
    return env


def start(env: dict[str, str], *job_args: str) -> PtyChild:
    return start_script(env, "hosts=2,gpus=2", JOB, *job_args)


def finish(child: PtyChild) -> tuple[int, str]:
    """Wait for the launcher to exit; (its status, everything it printed), checked for noise."""
    child.expect(pexpect.EOF)
    child.close()
    text = child.logfile_read.getvalue()
    ours = "\n".join(line for line in text.splitlines() if not line.startswith("[r"))  # ranks' own output aside
    for noise in NOISE:
        assert noise not in ours, text
    return child.exitstatus, text


def answers(child: PtyChild, line: str, answer: str, prompt: str = RANK0) -> None:
    """Type `line` at a prompt; wait for `answer`, then for `prompt` again."""
    child.sendline(line)
    child.expect(answer)
    child.expect(prompt)


def stop_the_job(child: PtyChild) -> tuple[int, str]:
    """`stop` at meshdbg>, confirmed: the launcher's status and everything it printed (`finish`)."""
    child.sendline("stop")
    child.expect("stop the whole job")
    child.sendline("y")
    return finish(child)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=env, capture_output=True, text=True,
                          timeout=WAIT_S)


def test_start_step_stop_and_end_the_job(env: dict[str, str]) -> None:
    child = start(env)
    try:
        child.expect("attached to rank 0 \\(hosts=0,gpus=0\\)")
        child.expect(RANK0)
        child.sendline("n")
        child.expect(RANK0)
        child.sendline("p number, result")
        child.expect(r"\(0, 0\)")
        child.expect(RANK0)
        child.sendcontrol("d")
        child.expect("detached from rank 0")
        child.expect(TOP)
        child.sendline("list --all")  # every worker, as `meshdbg list --all`: the running ones too
        child.expect(r"0\s+worker\s+hosts=0,gpus=0\s+stopped\s+-\s+run_job.py:\d+")
        child.expect(r"3\s+worker\s+hosts=1,gpus=1\s+running")
        child.expect(TOP)
        child.sendline("stop")
        child.expect("3 ranks still running; stop the whole job\\? \\[y/N\\]")
        child.sendline("n")
        child.expect("not stopped")
        child.expect(TOP)
        status, text = stop_the_job(child)
    finally:
        child.close(force=True)
    assert status == 130
    assert "stopping the job" in text and "meshdbg: stopped from the console; stopping the mesh" in text


def test_ctrl_z_says_why_it_does_not_suspend_the_job_and_keeps_the_typed_line(env: dict[str, str]) -> None:
    """The console of `meshdbg run` is the job's server: suspended, its paused ranks would run on
    after the reconnect window. (prompt_toolkit typed a literal ^Z into the line, which pdb then
    refused: `*** SyntaxError: invalid non-printable character U+001A`.)"""
    child = start(env)
    try:
        child.expect(RANK0)
        child.send("p number + 4000 + 1")
        child.sendcontrol("z")
        child.expect("Ctrl-Z does not suspend `meshdbg run`")
        child.sendline("")
        child.expect("4001")
        child.expect(RANK0)
        status, text = answers_then_stop_the_job(child, RANK0)
    finally:
        child.close(force=True)
    assert status == 130 and "U+001A" not in text


@pytest.mark.parametrize("between", [False, True], ids=["at once", "after a line"])
def test_ctrl_c_at_the_prompt_explains_then_a_second_one_stops_the_job(env: dict[str, str], between: bool) -> None:
    """A line entered between two Ctrl-C makes the second a first one again (it stopped the
    whole job when it came within 3 s of the first): it explains, and the next one stops."""
    child = start(env)
    try:
        child.expect(RANK0)
        child.sendcontrol("d")
        child.expect(TOP)
        for line in (["list"] if between else []) + [""]:
            child.sendcontrol("c")
            child.expect("Ctrl-C again within 3 s stops the whole job")
            child.expect(TOP)
            if line:
                child.sendline(line)
                child.expect(r"0\s+worker\s+hosts=0,gpus=0")
                child.expect(TOP)
        child.sendcontrol("c")
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 130 and "stopped by Ctrl-C at meshdbg>" in text
    assert text.count("Ctrl-C again within 3 s") == (2 if between else 1)


def test_quit_closes_the_console_until_the_next_stop_and_the_job_ends_quietly(env: dict[str, str]) -> None:
    child = start(env, "0")  # ranks 1-3 finish at once: only rank 0 is left
    try:
        child.expect(RANK0)
        child.sendcontrol("d")
        child.expect(TOP)
        child.sendline("quit")
        child.expect("console closed until the next stop; 1 session stay")
        resumed = cli(env, "continue", "0")  # another terminal lets rank 0 run to its next stop
        assert resumed.returncode == 0, resumed.stderr
        child.expect("attached to rank 0")  # the console is back, at the new stop
        child.expect(RANK0)
        child.sendline("c")  # rank 0 ends; the job is over
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 0
    assert text.count("attached to rank 0") == 2  # opened twice: at the start and at the next stop, no loop
    assert "rank 0 done 10" in text


def _rank_0_state(env: dict[str, str]) -> str:
    listed = cli(env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return next(s["state"] for s in json.loads(listed.stdout) if s["rank"] == 0)


def test_quit_while_a_rank_runs_a_command_says_it_pauses_once_the_command_ends(env: dict[str, str],
                                                                              tmp_path: Path) -> None:
    """(quit said every live session "stays paused", a rank running another client's command
    among them.)"""
    release = tmp_path / "release"
    child = start(env, "0")
    cast = None
    try:
        child.expect(RANK0)
        child.sendcontrol("d")
        child.expect(TOP)
        wait = f"!import os, time; [time.sleep(0.02) for _ in iter(lambda: os.path.exists({str(release)!r}), True)]"
        cast = subprocess.Popen([sys.executable, "-m", "meshdbg", "cast", "0", wait], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for(lambda: _rank_0_state(env) == "running", WAIT_S, "rank 0 to run the cast's command")
        for _ in range(50):  # the console hears of it through its watch: `list` shows what it knows
            child.sendline("list")
            seen = child.expect([r"0\s+worker\s+hosts=0,gpus=0\s+running", r"0\s+worker\s+hosts=0,gpus=0\s+stopped"])
            child.expect(TOP)
            if seen == 0:
                break
        child.sendline("quit")
        child.expect(re.escape("console closed until the next stop; 1 session stays paused (1 once its command "
                               "ends), the job runs on"))
        release.touch()
        _, err = cast.communicate(timeout=WAIT_S)
        assert cast.returncode == 0, err
        assert cli(env, "continue", "0").returncode == 0  # it was paused: `continue` takes it to its next stop
        child.expect("attached to rank 0")
        child.expect(RANK0)
        child.sendline("c")
        status, text = finish(child)
    finally:
        if cast is not None and cast.poll() is None:
            cast.kill()
        child.close(force=True)
    assert status == 0 and "rank 0 done 10" in text


@pytest.mark.parametrize("signum, why", [(signal.SIGTERM, "terminated"), (signal.SIGINT, "interrupted")])
def test_a_signal_to_the_launcher_closes_the_console_and_stops_the_mesh(env: dict[str, str], signum: int,
                                                                       why: str) -> None:
    child = start(env)
    try:
        child.expect(RANK0)
        if signum == signal.SIGINT:  # with the console closed, Ctrl-C is the launcher's
            child.sendcontrol("d")
            child.expect(TOP)
            child.sendline("quit")
            child.expect("console closed")
        os.kill(child.pid, signum)
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 130 and f"meshdbg: {why}; stopping the mesh" in text


def test_an_invalid_line_keeps_the_cursor_at_its_end_and_histories_are_apart(env: dict[str, str]) -> None:
    child = start(env)
    try:
        child.expect(RANK0)
        answers(child, "p 6*7", "42")
        child.sendcontrol("d")
        child.expect(TOP)
        child.sendline("nn")
        child.expect("unknown command 'nn'")
        child.send("\x15")  # Ctrl-U clears what is left of the refused line before the cursor: all of it
        child.sendline("list")
        child.send("\x1b[A")  # up-arrow typed ahead while `list` runs: the last console command, not the pdb line
        child.expect("RANK")
        child.expect(TOP)
        child.expect("list")
        child.sendcontrol("c")  # clears the line
        child.sendcontrol("r")
        child.send("lis")
        child.expect("lis" + HIGHLIGHT_END + "t")  # `list` found, `lis` highlighted
        child.send("\r")  # one Enter runs the line found
        child.expect("RANK")
        child.expect(TOP)
        stop_the_job(child)
    finally:
        child.close(force=True)
    history = Path(env["MESHDBG_HISTORY"])
    assert "list" in history.read_text() and "p 6*7" not in history.read_text()
    assert "p 6*7" in Path(str(history) + "-pdb").read_text()
    assert oct(history.stat().st_mode & 0o777) == "0o600"


def test_ctrl_c_ends_a_reverse_search_and_the_next_line_runs(env: dict[str, str]) -> None:
    """Ctrl-C in a Ctrl-R search ends it, as readline's. It was left open: at the pdb prompt the
    next prompt sent every key to the search field, and at meshdbg> an empty search's Ctrl-C did
    too; Enter then ran nothing and the console looked frozen."""
    child = start(env)
    try:
        child.expect(RANK0)
        answers(child, "p 6*7", "42")
        child.sendcontrol("r")
        child.send("6")
        child.expect("6" + HIGHLIGHT_END + re.escape("*7"))  # `p 6*7` found
        child.sendcontrol("c")  # at the pdb prompt: pdb's interrupt, the session stays
        child.expect("--KeyboardInterrupt--")
        child.expect(RANK0)
        answers(child, "p 6*8", "48")
        child.sendcontrol("d")
        child.expect(TOP)
        child.sendcontrol("r")
        child.expect("reverse-i-search")
        child.sendcontrol("c")  # at meshdbg>: ends the search on an empty line, not an interrupt of the job
        child.sendline("list")
        child.expect("RANK")
        child.expect(TOP)
        status, text = stop_the_job(child)
    finally:
        child.close(force=True)
    assert status == 130 and "Ctrl-C again" not in text


def test_tab_completes_a_file_path_and_line_for_break(env: dict[str, str], tmp_path: Path) -> None:
    child = start(env)
    try:
        child.expect(RANK0)
        relative = os.path.relpath(JOB, os.getcwd())
        child.send(f"b {relative[:-6]}\t")
        child.expect(re.escape("job.py:"))  # the renderer writes only what Tab added
        child.sendcontrol("c")
        child.sendcontrol("d")
        child.expect(TOP)
        stop_the_job(child)
    finally:
        child.close(force=True)


def test_the_job_ends_quietly_while_another_terminal_watches(env: dict[str, str]) -> None:
    child = start(env, "0")
    watcher = None
    try:
        child.expect(RANK0)
        watcher = PtyChild([sys.executable, "-m", "meshdbg", "watch"], env=env, timeout=WAIT_S)
        watcher.expect_exact("rank 0 (hosts=0,gpus=0) stopped at run_job.py")
        child.sendline("c")
        child.expect(RANK0)  # the second stop
        child.sendline("c")
        status, text = finish(child)  # no grpc CancelledError from the watch stream being cut
        watcher.expect_exact("went away")
        watcher.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        if watcher is not None:
            watcher.close(force=True)
    assert status == 0 and watcher.exitstatus == 3


def start_script(env: dict[str, str], mesh: str, script: Path, *args: str) -> PtyChild:
    """`meshdbg run --mesh MESH SCRIPT ARGS` on a pty of its own."""
    return PtyChild([sys.executable, "-m", "meshdbg", "run", "--mesh", mesh, str(script), *args], env=env,
                    timeout=WAIT_S, dimensions=(40, 160))


def test_a_rank_continued_by_another_client_comes_back_to_the_console_each_time(env: dict[str, str],
                                                                               tmp_path: Path) -> None:
    """`meshdbg continue 0` from another terminal while the console is attached, a breakpoint
    just ahead, again and again: the rank comes back to a console each time, and nothing else
    is printed. (The console closing as the rank stopped again cancelled its attach before it
    ran: "RuntimeWarning: coroutine 'Console.attach' was never awaited", 1 time in 3.)"""
    job = tmp_path / "job.py"
    job.write_text("def f(n):\n    return n\n\n\nbreakpoint()\nfor i in range(40):\n    f(i)\n")
    child = start_script(env, "gpus=1", job)
    prompt = re.escape("(Pdb r0 gpus=0)")
    try:
        child.expect("attached to rank 0")
        child.expect(prompt)
        answers(child, "b f", "Breakpoint 1", prompt)
        for _ in range(8):
            assert cli(env, "continue", "0").returncode == 0
            child.expect(re.escape("continue   [sent by another client]"))
            child.expect(re.escape("attached to rank 0 (gpus=0) at job.py:2 f"))
            child.expect(prompt)
        answers(child, "cl 1", "Deleted breakpoint 1", prompt)
        child.sendline("c")
        status, _ = finish(child)
        assert status == 0
    finally:
        child.close(force=True)


def test_a_failing_rank_opens_post_mortem_and_the_job_ends_with_its_status(env: dict[str, str]) -> None:
    child = start_script(env, "hosts=2,gpus=2", HERE.parents[1] / "debugger" / "mesh" / "scripts" / "crash.py")
    try:
        child.expect("attached to rank 1 \\(hosts=0,gpus=1\\) at crash.py:7 compute")
        child.expect(re.escape("(Pdb r1 hosts=0,gpus=1)"))
        child.sendline("p rank")
        child.expect("1")
        child.sendline("q")  # leaves post-mortem: the rank ends with its error, the mesh stops
        child.expect("rank 1 failed first \\(exit status 1\\)")
        status, _ = finish(child)
    finally:
        child.close(force=True)
    assert status == 1


def test_a_rank_killed_while_every_rank_is_paused_leaves_the_others_paused_until_stop(env: dict[str, str]
                                                                                       ) -> None:
    """SIGKILL of the attached rank is the job's first failure, but the other paused ranks stay
    paused (SIGTERM took them at once); `stop` ends the job, with the killed rank's status, and
    the console closes saying nothing of ranks running on (it said "every rank runs; the
    console closes until the next stop" as the job ended)."""
    child = start_script(env, "hosts=1,gpus=3", HERE.parents[1] / "scripts" / "hold.py")
    try:
        child.expect(r"attached to rank (\d)")  # the first to stop
        attached = int(child.match.group(1))
        wait_for(lambda: len(json.loads(cli(env, "list", "--json").stdout)) == 3, WAIT_S, "3 paused ranks")
        pid = next(s["pid"] for s in json.loads(cli(env, "list", "--json").stdout) if s["rank"] == attached)
        os.kill(pid, signal.SIGKILL)
        others = ", ".join(str(rank) for rank in range(3) if rank != attached)
        child.expect(re.escape(f"rank {attached} failed (SIGKILL, exit status 137); the mesh stops once ranks "
                               f"{others}, paused in pdb, go on"))
        child.expect(TOP)
        assert sorted(s["rank"] for s in json.loads(cli(env, "list", "--json").stdout)) == \
            [rank for rank in range(3) if rank != attached]  # still paused
        child.sendline("stop")
        child.expect(re.escape(f"rank {attached} failed first (SIGKILL, exit status 137); the mesh was stopped"))
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 137
    assert "the console closes until the next stop" not in text


def test_threads_of_a_rank_each_stop_and_continue_ends_the_job(env: dict[str, str]) -> None:
    child = start_script(env, "hosts=1,gpus=2", HERE.parents[1] / "scripts" / "threads.py")
    try:
        child.expect(r"\(Pdb r[01] hosts=0,gpus=[01]")  # whichever rank stops first (its thread named)
        child.sendcontrol("d")
        child.expect(TOP)
        # Every thread at its prompt first: on a loaded machine the other rank's were still
        # opening, and `c` resumed only the two that were stopped, as it should.
        wait_for(lambda: [s["state"] for s in json.loads(cli(env, "list", "--json").stdout)] == ["stopped"] * 4,
                 what="both ranks' threads stopped")
        child.sendline("list")
        child.expect("worker-1")
        child.expect(TOP)
        child.sendline("c")
        child.expect("resumed 4 sessions \\(ranks 0-1\\)")
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 0 and text.count("all threads done") == 2


@pytest.mark.torch
def test_a_torch_gloo_job_is_quiet_and_ends_from_the_console(env: dict[str, str]) -> None:
    child = start_script(env, "hosts=2,gpus=2", HERE / "gloo_job.py")
    rank1 = re.escape("(Pdb r1 hosts=0,gpus=1)")
    try:
        child.expect(rank1)
        child.sendline("p float(loss)")
        child.expect("90.0")  # 3 * (1 + 4 + 9 + 16): the loss all_reduced over the four ranks
        child.expect(rank1)
        child.sendcontrol("d")
        child.expect(TOP)
        status, text = stop_the_job(child)
    finally:
        child.close(force=True)
    assert status == 130 and "NumPy" not in text


def answers_then_stop_the_job(child: PtyChild, prompt: str) -> tuple[int, str]:
    """The attached session still answers at `prompt`; then `detach` and `stop`, which asks
    first while ranks run (so the job was alive): the launcher's status and output."""
    answers(child, "p 6*7", "42", prompt)
    child.sendline("detach")
    child.expect(TOP)
    return stop_the_job(child)


def test_ctrl_c_at_an_idle_pdb_prompt_is_pdbs_keyboard_interrupt_and_the_session_stays(env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", JOB)
    rank0 = re.escape("(Pdb r0 gpus=0)")
    try:
        child.expect(rank0)
        child.sendcontrol("c")
        child.expect_exact("--KeyboardInterrupt--")  # what local pdb prints, staying in the session
        child.expect(rank0)
        child.send("p 1+")
        child.sendcontrol("c")  # a half-typed line is dropped, as by local pdb
        child.expect_exact("--KeyboardInterrupt--")
        status, text = answers_then_stop_the_job(child, rank0)
    finally:
        child.close(force=True)
    assert status == 130 and "stopped from the console" in text and text.count("detached from rank 0") == 1


def test_three_quick_ctrl_c_at_pdb_and_a_stray_sigint_leave_the_job_and_the_session(env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", JOB)
    rank0 = re.escape("(Pdb r0 gpus=0)")
    try:
        child.expect(rank0)
        for _ in range(3):  # three quick presses: some land while the prompt is being redrawn
            child.sendcontrol("c")
        os.kill(child.pid, signal.SIGINT)  # and one while no command is registered
        answers(child, "p 6*7", "42", rank0)
        child.sendline("p ('number', number)")
        child.expect_exact("('number', 0)")  # still the first stop of rank 0
        child.expect(rank0)
        status, text = answers_then_stop_the_job(child, rank0)
    finally:
        child.close(force=True)
    assert status == 130 and "stopped from the console" in text and "interrupted" not in text


def ctrl_c_on_rank_0_running(env: dict[str, str], line: str) -> tuple[PtyChild, str]:
    """A job whose rank 0 runs `line` at its pdb prompt, Ctrl-C pressed once it runs: the
    console, and rank 0's prompt."""
    child = start_script(env, "gpus=2", JOB)
    rank0 = re.escape("(Pdb r0 gpus=0)")

    def running() -> bool:
        done = cli(env, "list", "--json")
        return done.returncode == 0 and any(s["rank"] == 0 and s["state"] == "running" for s in json.loads(done.stdout))

    try:
        child.expect(rank0)
        child.sendline(line)
        wait_for(running, WAIT_S, "rank 0 running its command")
        child.sendcontrol("c")
    except BaseException:
        child.close(force=True)
        raise
    return child, rank0


def interrupted_then_stop_the_job(child: PtyChild, rank0: str) -> tuple[int, str]:
    """The command's `*** KeyboardInterrupt`, rank 0's prompt back, then `answers_then_stop_the_job`."""
    child.expect_exact("*** KeyboardInterrupt")
    child.expect(rank0)
    return answers_then_stop_the_job(child, rank0)


def test_ctrl_c_on_a_command_blocked_in_c_interrupts_it_at_once_as_local_pdb(env: dict[str, str]) -> None:
    child, rank0 = ctrl_c_on_rank_0_running(env, "!import time; time.sleep(600)")
    try:
        status, text = interrupted_then_stop_the_job(child, rank0)  # local pdb's, at once: not when the sleep ends
    finally:
        child.close(force=True)
    assert status == 130 and "cannot break in yet" not in text


def test_a_second_ctrl_c_asks_a_command_still_blocked_in_c_again(env: dict[str, str]) -> None:
    """A command blocked in C that cannot be broken into yet (a SIGINT handler of the program's
    own is left alone): the console gives its prompt back, Ctrl-C on the empty line asks again,
    and the rank comes back with the command's KeyboardInterrupt once the call returns."""
    child, rank0 = ctrl_c_on_rank_0_running(
        env, "!import signal, time; signal.signal(signal.SIGINT, lambda *_: None); time.sleep(4)")
    try:
        child.expect("cannot break in yet")
        child.expect(TOP)
        child.sendcontrol("c")
        child.expect("interrupting rank 0")  # it said "could not be interrupted (it is not running)"
        status, text = interrupted_then_stop_the_job(child, rank0)
    finally:
        child.close(force=True)
    assert status == 130 and "could not be interrupted" not in text


def test_ctrl_c_while_a_long_output_is_drawn_cuts_the_output_not_the_job(env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", JOB)
    rank0 = re.escape("(Pdb r0 gpus=0)")
    try:
        child.expect(rank0)
        child.sendline("pp list(range(250_000))")  # about 2 MB of pdb output
        child.expect(r"\r+\n 1000,\r+\n")  # drawing has begun; the pty fills while we read no further
        child.sendintr()
        child.expect(r"--KeyboardInterrupt-- \(output cut: [\d,]+ of [\d,]+ characters not shown\)", timeout=30)
        child.expect(rank0)
        status, text = answers_then_stop_the_job(child, rank0)
    finally:
        child.close(force=True)
    assert status == 130 and "stopped from the console" in text and "249999," not in text


# Rank 0's sidekick thread has stopped too: announced above the prompt when it stops after the
# console has synced, and the prompt then names the attached thread (the rank has two sessions).
SIDEKICK_STOPPED = r"stopped at threads_job.py:\d+ sidekick| MainThread\)"


def test_rank_log_lines_are_written_above_the_line_being_typed(env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", HERE / "threads_job.py")
    rank0 = re.escape("(Pdb r0 gpus=0")
    try:
        child.expect(rank0)
        child.expect(SIDEKICK_STOPPED)
        child.send("p 'ab")
        child.expect_exact("p 'ab")
        child.expect(r"\[r1 gpus=1\] rank 1 tick \d+")  # a log line while the line is half typed
        typed_to_log = child.before.rsplit("p 'ab", 1)[-1]
        assert "\x1b[J" in typed_to_log, repr(typed_to_log)  # the prompt was erased first, not written into
        child.sendline("cd'")  # and what was typed is still there, whole
        child.expect_exact("'abcd'")
        child.sendline("detach")
        child.expect(TOP)
        stop_the_job(child)
    finally:
        child.close(force=True)


def test_threads_are_named_in_the_prompt_list_attach_and_cast(env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", HERE / "threads_job.py")
    try:
        child.expect(SIDEKICK_STOPPED)  # rank 0's second thread
        child.sendline("p where")  # the prompt now names the thread: the rank has two sessions
        child.expect("'main'")
        child.expect(re.escape("(Pdb r0 gpus=0 MainThread)"))
        child.sendline("detach")
        child.expect(TOP)
        child.sendline("list")
        child.expect(r"MainThread\s+#\d+")
        child.expect(TOP)
        child.send("attach 0 side\t")
        child.expect("kick")  # Tab completed the thread's name
        child.sendline("")
        child.expect(re.escape("(Pdb r0 gpus=0 sidekick)"))
        child.sendline("p where")
        child.expect("'sidekick'")
        child.sendline("detach")
        child.expect(TOP)
        child.sendline("cast 0 p where")
        child.expect(re.escape("rank 0 (MainThread):"))
        child.expect(re.escape("rank 0 (sidekick):"))
        child.expect(TOP)
        child.sendline("attach 0 nosuch")
        child.expect(re.escape("rank 0 has no session in thread nosuch (its threads: MainThread"))
        child.expect(TOP)
        stop_the_job(child)
    finally:
        child.close(force=True)


def test_ctrl_c_after_c_closed_the_console_interrupts_the_rank_first_and_a_second_stops_the_job(
        env: dict[str, str]) -> None:
    child = start_script(env, "gpus=2", HERE / "after_c_job.py")
    rank0 = re.escape("(Pdb r0 gpus=0)")
    try:
        child.expect(rank0)
        child.sendline("c")
        child.expect(re.escape("the console closes until the next stop (Ctrl-C interrupts rank 0 (gpus=0), "
                               "a second one stops the job)"))
        child.sendintr()
        child.expect("interrupting rank 0, the rank you let run; Ctrl-C again stops the whole job")
        child.expect("attached to rank 0")  # it stopped: the console is back, the job runs on
        child.expect(rank0)
        child.sendline("!block = True")  # from here on it waits in C: no interrupt reaches it
        child.expect(rank0)
        child.sendline("c")
        child.expect("the console closes until the next stop")
        child.sendintr()
        child.expect("interrupting rank 0")
        child.sendintr()  # the second one, as announced
        status, text = finish(child)
    finally:
        child.close(force=True)
    assert status == 130 and "meshdbg: interrupted; stopping the mesh" in text


def test_continue_says_resumed_before_the_next_stops_of_ranks_that_stop_again_at_once(env: dict[str, str],
                                                                                    tmp_path: Path) -> None:
    """`continue 0-2` to ranks that stop again at once says "resumed" first, then each rank's
    new stop. (A fast rank's "rank 0 stopped at ..." came before "resumed 3 sessions", which
    waits for every rank: it read as if the stop came before the resume.) Rank 3 stays paused,
    so the console stays at meshdbg> throughout."""
    job = tmp_path / "job.py"
    # Rank 3 stops once (at line 4); ranks 0-2 at lines 4-10, each step's stops told apart from the last's.
    job.write_text("import os\nheld = os.environ['MESHDBG_RANK'] == '3'\nbreakpoint()\n"
                   + "if not held: breakpoint()\n" * 6 + "pass\n")
    child = start_script(env, "gpus=4", job)
    try:
        child.expect(r"\(Pdb r\d gpus=\d\)")
        child.sendline("detach")
        child.expect(TOP)
        wait_for(lambda: sum(s["state"] == "stopped" for s in json.loads(cli(env, "list", "--json").stdout)) == 4,
                 WAIT_S, "every rank at its first stop")
        for step in range(6):  # (a race: it showed in a step or two of six)
            child.sendline("continue 0-2")
            child.expect(rf"resumed 3 sessions|stopped at job.py:{step + 5}")
            assert child.after.startswith("resumed"), f"step {step}: a rank's next stop came before 'resumed'"
            for _ in range(3):
                child.expect(rf"rank \d \(gpus=\d\) stopped at job.py:{step + 5}")
        assert cli(env, "continue", "all").returncode == 0
        status, _ = finish(child)
        assert status == 0
    finally:
        child.close(force=True)


def test_what_the_console_says_of_a_resume_comes_before_what_the_ranks_print(env: dict[str, str],
                                                                             tmp_path: Path) -> None:
    """`c` at a rank's prompt says "rank 0 ... continued" before the line the rank prints right
    after, and `continue all` says "resumed" before the lines of the ranks it resumed and the
    news of their next stops, as local pdb's terminal shows `c` and then the program's output.
    (The ranks' lines, and a fast rank's "stopped at", came first: they reached the console
    before it had said what it did.)"""
    job = tmp_path / "job.py"
    job.write_text("import os\nrank = os.environ['MESHDBG_RANK']\nbreakpoint()\nprint(f'rank {rank} ran on', flush=True)\n"
                   "breakpoint()\nprint(f'rank {rank} at the end', flush=True)\n")
    child = start_script(env, "gpus=2", job)
    try:
        child.expect(r"\(Pdb r(\d) gpus=\d\)")  # the first rank to stop
        rank = child.match.group(1)
        child.sendline("c")
        child.expect(rf"continued; back at meshdbg>|rank {rank} ran on")
        assert "continued" in child.after, "the rank's line came before the console said it continued"
        child.expect(f"rank {rank} ran on")
        child.expect(r"\(Pdb r\d gpus=\d\)")  # the next stop
        child.sendline("detach")
        child.expect(TOP)
        child.sendline("continue all")
        child.expect(r"resumed 2 sessions|rank \d (ran on|at the end)|stopped at")
        assert child.after.startswith("resumed"), f"a rank's line or stop came before 'resumed': {child.after!r}"
        # The rank that was at its first stop, at its second
        wait_for(lambda: any(s["state"] == "stopped" for s in json.loads(cli(env, "list", "--json").stdout)), WAIT_S,
                 "a rank at its second stop")
        assert cli(env, "continue", "all").returncode == 0
        status, text = finish(child)
        assert status == 0
        # the job's last line says it ended (the console's last was about ranks it let run)
        assert text.rstrip().endswith("meshdbg: the job ended: ranks 0-1 status 0"), text[-300:]
    finally:
        child.close(force=True)
