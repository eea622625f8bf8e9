"""`meshdbg attach` in a pseudo-terminal against a real server and real stopped workers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pexpect
import pytest
from console_harness import WAIT_S, Mesh
from pty_child import PtyChild

TOP = "meshdbg>"
CTRL_D = "\x04"
CTRL_R = "\x12"
UP = "\x1b[A"


def run(child: PtyChild, line: str, *expected: str) -> None:
    """Type a line, then wait for each expected pattern in turn (a prompt only if one is given)."""
    child.sendline(line)
    for pattern in expected:
        child.expect(pattern)


def recall(child: PtyChild, line: str, tries: int = 40) -> None:
    """Press Up until the prompt shows `line` (the history loads in a thread after the prompt
    appears, so an early Up may find it empty), bounded."""
    for _ in range(tries):
        child.send(UP)
        if child.expect([re.escape(line), pexpect.TIMEOUT], timeout=0.5) == 0:
            return
    raise AssertionError(f"Up never recalled {line!r}")


def test_list_and_grouped_cast(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    run(child, "list", r"0\s+worker\s+hosts=0,gpus=0\s+stopped", r"2\s+worker\s+hosts=1,gpus=0\s+stopped", TOP)
    run(child, "cast all p shared_note", re.escape("ranks 0-2 (3 ranks):"), "'the same on every rank'", TOP)
    run(child, "cast ranks(hosts=0) p loss_scale", r"rank 0:\s+0\.5\s+rank 1:\s+1\.0", TOP)
    run(child, "quit", "bye; 3 sessions left as they are")
    child.expect(pexpect.EOF)


def test_help_lists_commands_and_shows_docstrings(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    run(child, "help", "Console commands", r"a\(ttach\) <rank>", r"cast <selection> <pdb command>", r"q\(uit\)", TOP)
    run(child, "h continue", re.escape("c(ontinue) [--clear] [selection]"), "Resume the selected", TOP)


def test_unknown_command_is_refused_with_a_suggestion(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    child.sendline("lsit")
    child.expect("unknown command 'lsit': did you mean 'list'\\?")
    child.sendcontrol("u")  # the refused line stays for editing; clear it
    run(child, "p loss_scale", "'p' is a pdb command: attach <rank> first")
    child.sendcontrol("c")
    run(child, "list", "hosts=1,gpus=0", TOP)
    run(child, "quit", "bye")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.logfile_read.getvalue()


def test_bad_selection_points_at_the_problem(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    child.sendline("cast ranks(1,,2) p x")
    child.expect("expected an integer")
    child.sendcontrol("c")
    run(child, "cast ranks(7) p x", r"\*\*\* no session matches ranks\(7\)", TOP)


def test_a_cast_quoted_as_for_a_shell_is_refused_and_runs_nowhere(three_ranks: Mesh) -> None:
    """`cast all 'p loss_scale'`, as the CLI needs it, printed the string back on every rank."""
    child = three_ranks.console()
    child.expect(TOP)
    child.sendline("cast all 'p loss_scale'")
    child.expect(re.escape("pdb would get the quotes too (no shell takes them off here): cast all p loss_scale "
                           "(at column 10)"))
    child.sendcontrol("c")
    child.sendline("compare ranks(hosts=0) \"loss_scale\"")
    child.expect(re.escape("loss_scale (at column 24)"))  # (the screen redraws only what differs from the line above)
    child.sendcontrol("c")
    run(child, "cast ranks(hosts=0) p loss_scale", r"rank 0:\s+0\.5\s+rank 1:\s+1\.0", TOP)
    run(child, "quit", "bye")
    child.expect(pexpect.EOF)
    assert "'p loss_scale'\r\n" not in child.logfile_read.getvalue()  # no rank printed the string back


def test_an_error_wider_than_the_terminal_is_shown_whole(three_ranks: Mesh) -> None:
    """A refused line's error wraps onto more rows (prompt_toolkit gives it one, which cut it)."""
    child = three_ranks.console()
    child.expect(TOP)
    child.sendline("break all 9Z9")  # its error is 215 characters; the terminal is 160 wide
    child.expect("cannot parse action '9Z9'")
    child.expect(re.escape("(at column 11)"))
    child.sendcontrol("c")
    run(child, "quit", "bye")
    child.expect(pexpect.EOF)


def test_attach_completes_remotely_and_detach_leaves_the_rank_paused(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    child.send("att\t")
    child.expect("ach")  # what Tab added (the renderer may draw "att" first, as on uvloop)
    run(child, " 1", re.escape("attached to rank 1 (hosts=0,gpus=1)"), re.escape("(Pdb r1 hosts=0,gpus=1)"))
    child.send("p loss_s\t")
    child.expect("cale")  # the renderer writes only what Tab added
    run(child, "", r"1\.0", re.escape("(Pdb r1 hosts=0,gpus=1)"))
    child.send(CTRL_D)
    child.expect("detached from rank 1 \\(hosts=0,gpus=1\\); it stays paused")
    child.expect(TOP)
    sessions = three_ranks.wait_sessions(live={0, 1, 2})
    assert [s["state"] for s in sessions if s["rank"] == 1] == ["stopped"]
    run(child, "attach 1", re.escape("(Pdb r1 hosts=0,gpus=1)"))
    run(child, "detach", "it stays paused", TOP)


@pytest.mark.parametrize("silent", ["once asked", "already"])
def test_continue_names_a_rank_that_does_not_answer(mesh: Mesh, silent: str) -> None:
    """`continue` at meshdbg> with rank 1 SIGSTOPped: still listed stopped, it stops answering
    once asked (the resume was sent); listed not answering already, it is not asked, and the
    console says why it was not resumed. (It said "resumed 1 session (rank 0)" and nothing of
    rank 1, which stayed paused once woken, or ran.)"""
    mesh.start_worker(0)
    hung = mesh.start_worker(1)
    mesh.wait_sessions(stopped={0, 1})
    child = mesh.console()
    child.expect(TOP)
    os.kill(hung.pid, signal.SIGSTOP)
    try:
        if silent == "already":
            child.expect("rank 1.*not answering")  # the console's own news of it
            said = f"not resumed: rank 1 (pid {hung.pid}) is stopped (SIGSTOP) and not answering"
        else:
            said = "no answer from rank 1: the resume was sent, and takes effect if it reaches them"
        run(child, "continue", re.escape("resumed 1 session (rank 0)"), re.escape(said), TOP)
    finally:
        os.kill(hung.pid, signal.SIGCONT)


def test_ctrl_z_suspends_the_console_to_its_shell_and_fg_brings_it_back(three_ranks: Mesh) -> None:
    """As any terminal program under a shell with job control (prompt_toolkit typed a literal
    ^Z into the line, which pdb then refused: `*** SyntaxError: invalid non-printable character
    U+001A`). The rank stays paused meanwhile."""
    shell = PtyChild(["bash", "--norc", "--noprofile", "-i"], env=dict(three_ranks.env, PS1="SHELL> "),
                     timeout=WAIT_S, dimensions=(40, 160))
    three_ranks.consoles.append(shell)
    shell.expect("SHELL> ")
    shell.sendline(f"{sys.executable} -m meshdbg attach 0")
    shell.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    shell.sendcontrol("z")
    shell.expect("Stopped")
    shell.expect("SHELL> ")
    shell.sendline("fg")
    shell.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))  # drawn again
    # Raw mode again, as before Ctrl-Z: the prompt stayed in the shell's cooked mode after fg,
    # where the terminal echoed the reply to its cursor-position request (`^[[5;1R`) and
    # every key, and Ctrl-C was the line discipline's SIGINT.
    assert termios.tcgetattr(shell.child_fd)[3] & (termios.ICANON | termios.ECHO | termios.ISIG) == 0
    shell.sendline("p loss_scale * 20")
    shell.expect(r"10\.0")
    shell.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    assert "U+001A" not in shell.logfile_read.getvalue()


@pytest.mark.parametrize("lost", ["the server", "the worker"])
def test_an_attach_lost_with_its_server_is_not_called_the_sessions_end(three_ranks: Mesh, lost: str) -> None:
    """With its server gone the session lives in the worker (which tries its server again for
    the reconnect window): the console says it was detached, not "rank 0: session ended (the
    server ... went away)". With its worker gone, the session ended."""
    child = three_ranks.console("0")
    child.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    if lost == "the server":
        three_ranks.server.kill()
        said = f"detached from rank 0 (hosts=0,gpus=0): the server at {three_ranks.addr} went away"
    else:
        three_ranks.workers[0].kill()
        said = "rank 0 (hosts=0,gpus=0): session ended (the worker went away)"
    child.expect(re.escape(f"{said}; back at meshdbg>"))


def test_continue_in_pdb_returns_to_the_top_prompt(three_ranks: Mesh) -> None:
    child = three_ranks.console("2")
    child.expect(re.escape("(Pdb r2 hosts=1,gpus=0)"))
    run(child, "c", re.escape("rank 2 (hosts=1,gpus=0) continued; back at meshdbg>"), TOP)
    three_ranks.wait_sessions(live={0, 1})
    run(child, "continue", re.escape("resumed 2 sessions (ranks 0-1)"), TOP)


def continued(mesh: Mesh, rank: int, then: str, bootstrap: bool = False) -> PtyChild:
    """A console attached to a new worker of rank `rank` (which then does `then`: stopping_worker.py),
    that let it run with `c`: back at meshdbg>."""
    mesh.start_worker(rank, then=then, bootstrap=bootstrap)
    mesh.wait_sessions(stopped={rank})
    child = mesh.console(str(rank))
    child.expect(re.escape(f"(Pdb r{rank} hosts={rank // 2},gpus={rank % 2})"))
    run(child, "c", "continued; back at meshdbg>")
    return child


def test_a_continued_rank_comes_back_to_the_prompt_at_its_next_stop(mesh: Mesh) -> None:
    child = continued(mesh, 1, "again")
    child.expect(re.escape("(Pdb r1 hosts=0,gpus=1)"))
    run(child, "p second_stop", "True", re.escape("(Pdb r1 hosts=0,gpus=1)"))
    run(child, "c", "continued; back at meshdbg>", TOP)


def test_a_continued_rank_that_stops_while_you_type_is_announced_and_your_line_kept(mesh: Mesh,
                                                                                    tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    child = continued(mesh, 1, f"gate:{gate}")
    child.expect(TOP)
    child.send("lis")
    child.expect("lis")
    gate.touch()
    child.expect(re.escape("attach 1 to debug it again"))
    run(child, "t", r"1\s+worker\s+hosts=0,gpus=1\s+stopped", TOP)


def test_history_is_kept_across_runs(three_ranks: Mesh) -> None:
    first = three_ranks.console()
    first.expect(TOP)
    run(first, "cast 0 p 6*7", "42", TOP)
    run(first, "cast 0 p 'first' + 'run'", "'firstrun'", TOP)
    run(first, "quit")
    first.expect(pexpect.EOF)
    second = three_ranks.console()
    second.expect(TOP)
    recall(second, "quit")  # the history is loaded now
    second.send(UP)  # above `quit`
    run(second, "", "'firstrun'", TOP)
    second.send(CTRL_R + "6*")
    # the history loads in a thread; Enter once the line is found, as a person sees it, or it accepts nothing
    second.expect(re.escape("6*") + r"(\x1b\[[0-9;]*m)+7")  # `cast 0 p 6*7` found, `6*` highlighted
    second.send("\r")  # leaves the search with the found line
    second.expect(re.escape("meshdbg> cast 0 p 6*7"))
    run(second, "", "42", TOP)


def test_new_stop_is_announced_without_breaking_the_typed_line(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    child.send("cast all p ra")
    child.expect("p ra")
    three_ranks.start_worker(5, coords="hosts=2,gpus=1")
    child.expect(re.escape("rank 5 (hosts=2,gpus=1) stopped at stopping_worker.py:17"))
    run(child, "nk", r"rank 0:\s+0", r"rank 5:\s+5", TOP)


def test_exit_of_a_rank_is_announced(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    three_ranks.start_worker(5)
    child.expect("rank 5 .* stopped at")  # the console's watch stream is live from here on
    three_ranks.workers[0].kill()
    child.expect(re.escape("rank 0 (hosts=0,gpus=0) exited: the worker went away"))


def test_ctrl_c_cancels_a_pending_cast(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    child.sendline("cast 0 !import time; time.sleep(30)")
    three_ranks.wait_sessions(running={0})
    child.sendcontrol("c")
    child.expect("cancelled")
    run(child, "cast 1 p loss_scale", r"rank 1:\s+1\.0", TOP)


def test_ctrl_c_interrupts_the_rank_that_was_continued(mesh: Mesh) -> None:
    child = continued(mesh, 0, "spin", bootstrap=True)
    child.expect(TOP)
    child.sendcontrol("c")
    child.expect("interrupting rank 0")
    child.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    run(child, "p then", "'spin'")


def attaching_to_a_pending_interrupt(mesh: Mesh, fifo: Path) -> PtyChild:
    """A console that interrupted rank 0 while it blocks in C (opening `fifo`), then typed
    `attach 0`: it waits for the rank's stop."""
    os.mkfifo(fifo)
    child = continued(mesh, 0, f"fifo:{fifo}", bootstrap=True)
    child.expect(TOP)
    run(child, "interrupt 0", "not stopped yet", TOP)
    run(child, "attach 0", re.escape("rank 0 (hosts=0,gpus=0) has not stopped yet; waiting for its stop"))
    return child


def test_attach_to_a_rank_whose_interrupt_is_pending_waits_for_its_stop(mesh: Mesh, tmp_path: Path) -> None:
    """`interrupt 0` while rank 0 blocks in C, then `attach 0`: no pdb prompt for a rank that
    runs (every line got "rank 0 is running, not stopped in pdb"); it comes back at its stop."""
    fifo = tmp_path / "gate"
    child = attaching_to_a_pending_interrupt(mesh, fifo)
    fifo.write_text("open")  # rank 0 leaves its blocking open(): it stops at its next line
    child.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    run(child, "p then", "'fifo:", re.escape("(Pdb r0 hosts=0,gpus=0)"))
    assert "not stopped in pdb" not in child.logfile_read.getvalue()


def test_ctrl_c_while_attach_waits_for_a_pending_interrupt_says_it_stays_pending(mesh: Mesh, tmp_path: Path) -> None:
    """Ctrl-C while `attach 0` waits for rank 0's stop: the console stops waiting, and says the
    interrupt still stands (it said a cast's "ranks already running the command finish it")."""
    fifo = tmp_path / "gate"
    child = attaching_to_a_pending_interrupt(mesh, fifo)
    child.sendcontrol("c")
    child.expect(re.escape("stopped waiting for rank 0 (hosts=0,gpus=0); its interrupt stays pending"))
    child.expect(TOP)
    fifo.write_text("open")
    mesh.wait_sessions(stopped={0})  # the interrupt stood: rank 0 stops at its next line
    run(child, "attach 0", re.escape("(Pdb r0 hosts=0,gpus=0)"))
    assert "finish it on their own" not in child.logfile_read.getvalue()


def test_plain_attach_to_a_rank_whose_interrupt_is_pending_waits_for_its_stop(mesh: Mesh, tmp_path: Path) -> None:
    """The same with `attach --plain` (its `(Pdb)` prompt answered every line "is running")."""
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    mesh.start_worker(0, then=f"fifo:{fifo}", bootstrap=True)
    mesh.wait_sessions(stopped={0})
    for verb in (["continue", "0"], ["interrupt", "0"]):
        done = subprocess.run([sys.executable, "-m", "meshdbg", *verb], env=mesh.env, capture_output=True, text=True,
                              timeout=WAIT_S)
        assert verb[0] == "interrupt" or done.returncode == 0, done.stderr
    assert "not stopped yet" in done.stdout + done.stderr
    child = mesh.console("--plain", "0")
    child.expect(re.escape("meshdbg: rank 0 (hosts=0,gpus=0) has not stopped yet; waiting for its stop"))
    fifo.write_text("open")
    child.expect(re.escape("meshdbg: attached to rank 0"))
    child.expect(re.escape("(Pdb)"))
    run(child, "p then", "'fifo:", re.escape("(Pdb)"))
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "not stopped in pdb" not in child.logfile_read.getvalue()


def test_source_is_highlighted_unless_no_color(three_ranks: Mesh) -> None:
    plain = three_ranks.console("0")
    plain.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    run(plain, "ll", r"17\s+->\s+if then == \"again\":")
    coloured = three_ranks.console("1", NO_COLOR="")
    coloured.expect(re.escape("(Pdb r1 hosts=0,gpus=1)"))
    coloured.sendline("ll")
    coloured.expect(r"\x1b\[[0-9;]*38;5;\d+m[^\n]*if")  # a 256-colour foreground before the code


def test_server_restart_is_survived(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    three_ranks.stop_server()
    child.expect("retrying every")
    run(child, "list", "no meshdbg server", TOP)
    three_ranks.start_server()
    child.expect("reconnected to the server at")  # the watcher's own retry
    run(child, "list", "no sessions", TOP)


def test_a_console_cut_off_mid_output_does_not_call_the_server_gone(three_ranks: Mesh) -> None:
    """Stopped (SIGSTOP, as a Ctrl-Z under a shell) while a huge output streams to it, the
    console is cut off by the server, which lives on: back, it said "the server at ... went
    away — retrying every 2 s" (its watch broke with its connection) before "detached ...:
    cut off by the server", then "reconnected". And the output it had taken before it was cut
    off is drawn above that line, not below it (the end watcher said it first)."""
    child = three_ranks.console("0")
    child.expect(re.escape("(Pdb r0 hosts=0,gpus=0)"))
    child.sendline("p 'y' * 4_000_000")
    child.expect("yyyy")  # streaming
    os.kill(child.pid, signal.SIGSTOP)
    try:
        time.sleep(STOPPED_PAST_KEEPALIVE_S)  # the fault: how long the console stays stopped
    finally:
        os.kill(child.pid, signal.SIGCONT)
    child.expect(r"cut off by the server[^\n]*\n")  # (the line ends "back at meshdbg>")
    child.expect(TOP)  # the prompt
    assert "yyyy" not in child.before, "output drawn below the line that says the console was cut off"
    run(child, "cast 1 p loss_scale", r"1\.0", TOP)
    assert "went away" not in child.logfile_read.getvalue()


@pytest.mark.parametrize("plain", [False, True], ids=["console", "plain"])
def test_a_server_stalled_under_a_line_in_flight_is_waited_out_and_the_console_attaches_again(three_ranks: Mesh,
                                                                                                 plain: bool) -> None:
    """The server stopped (SIGSTOP: a loaded machine) past the client's keepalive and the
    probe's wait while a line was on its way: back, the console said "this client took no
    output for 5 s and was cut off by the server" (it was the server that stalled) and left the
    person at meshdbg>, the line's fate unknown; `attach --plain` said the server "went away"
    and exited, leaving the rank it drove. Each now waits for a server whose port shows it
    stopped, says it stalled, and attaches to the same stop again, whose replay shows whether
    the line ran."""
    child = three_ranks.console(*(["--plain"] if plain else []), "0")
    prompt = re.escape("(Pdb)" if plain else "(Pdb r0 hosts=0,gpus=0)")
    child.expect(prompt)
    server = three_ranks.server
    assert server is not None
    os.kill(server.pid, signal.SIGSTOP)
    try:
        child.sendline("p loss_scale")
        time.sleep(STOPPED_PAST_PROBE_S)  # the fault: how long the server stays stopped
    finally:
        os.kill(server.pid, signal.SIGCONT)
    child.expect("did not answer for a while")
    child.expect("attached to rank 0")
    child.expect(prompt)
    three_ranks.wait_sessions(stopped={0, 1, 2})  # the rank's own stream, broken by the stall too, back
    run(child, "p loss_scale", r"0\.5", prompt)
    said = child.logfile_read.getvalue()
    assert "cut off" not in said and "went away" not in said


STOPPED_PAST_KEEPALIVE_S = 7.0  # past CLIENT_STALL_S (5 s) and the server's keepalive (~4 s)
STOPPED_PAST_PROBE_S = 9.0  # past the server's keepalive (~4 s) and then the client's probe (3 s)


def test_the_terminal_is_left_blocking_for_the_next_program(three_ranks: Mesh) -> None:
    """The console reads the terminal through uvloop, whose watch makes it non-blocking: a flag
    of the terminal's, not of the process. The next program in the same terminal found it so
    (`cat` failed with EAGAIN, "Resource temporarily unavailable"); it is given back as found."""
    after = f"{sys.executable} -c 'import os; print(\"stdin blocking:\", os.get_blocking(0))'"
    child = PtyChild(["sh", "-c", f"{sys.executable} -m meshdbg attach; {after}"], env=three_ranks.env,
                     timeout=WAIT_S, dimensions=(40, 160))
    three_ranks.consoles.append(child)
    child.expect(TOP)
    run(child, "quit", "bye; ")
    child.expect(r"stdin blocking: (True|False)")
    assert child.match.group(1) == "True"
    child.expect(pexpect.EOF)


def test_plain_flag_keeps_line_mode(three_ranks: Mesh) -> None:
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "p loss_scale", r"0\.5", re.escape("(Pdb)"))
    run(child, "detach")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("enter, inside, left", [("interact", "loss_scale * 4", "now exiting InteractiveConsole"),
                                                 ("commands 1", "p 'hit'", "")], ids=["interact", "commands"])
def test_plain_attach_ctrl_d_at_interact_or_commands_ends_that_input_only(three_ranks: Mesh, enter: str, inside: str,
                                                                          left: str) -> None:
    """As in local pdb: Ctrl-D at `>>> ` goes back to `(Pdb)`; at `(com) ` pdb takes it as
    a line (it stays there: `end` leaves); Ctrl-D at `(Pdb)` detaches. (It detached at once,
    leaving the rank in `interact` or its commands block.)"""
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "b 17" if enter.startswith("commands") else "p 1", re.escape("(Pdb)"))
    run(child, enter)
    child.expect(re.escape(">>> " if enter == "interact" else "(com) "))
    run(child, inside, r"2\.0\r\n>>> " if enter == "interact" else re.escape("(com) "))
    child.sendeof()
    if left:
        child.expect(left + ".*" + re.escape("(Pdb)"))
    else:
        child.expect(re.escape("(com) "))
        run(child, "end", re.escape("(Pdb)"))
    run(child, "p loss_scale", r"0\.5", re.escape("(Pdb)"))
    child.sendeof()
    child.expect(pexpect.EOF)
    three_ranks.wait_sessions(stopped={0})  # detached: the rank stays paused, at pdb's prompt
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "p 'back'", "'back'", re.escape("(Pdb)"))
    run(child, "detach")
    child.expect(pexpect.EOF)


def test_plain_attach_on_a_terminal_recalls_and_edits_lines_as_local_pdb(three_ranks: Mesh) -> None:
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "p loss_scale * 3", r"1\.5", re.escape("(Pdb)"))
    child.send("\x1b[A")  # up: the line before comes back
    child.send("\x1b[D\x1b[3~4\r")  # left onto the 3, delete it, type 4
    child.expect(r"\r\n2\.0\r\n")
    child.expect(re.escape("(Pdb)"))
    run(child, "detach")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("typed", [None, "!print('started', flush=True); __import__('time').sleep(60)"],
                         ids=["at the prompt", "during a command"])
def test_plain_attach_ends_at_once_with_status_1_when_its_worker_dies(mesh: Mesh, typed: str | None) -> None:
    """One line, then exit status 1, whether the worker dies while a line is read or while one
    runs (that one exited 0 before)."""
    worker = mesh.start_worker(0)
    mesh.wait_sessions(stopped={0})
    child = mesh.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    if typed is not None:
        child.sendline(typed)
        child.expect(r"started\r+\n")
    worker.kill()
    child.expect("meshdbg: session ended \\(the worker went away\\)", timeout=3)
    child.expect(pexpect.EOF, timeout=3)
    child.close()
    assert child.exitstatus == 1


@pytest.mark.parametrize("typed", [None, "p loss_scale"], ids=["waiting", "typing at once"])
def test_plain_attach_ends_with_status_1_when_its_server_is_killed(three_ranks: Mesh, typed: str | None) -> None:
    """Said in one line, whether a line is typed at once after the kill (that raised
    `InvalidStateError: RPC already finished`, a traceback) or none is."""
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    three_ranks.server.kill()
    if typed is not None:
        child.sendline(typed)
    child.expect(re.escape(f"meshdbg: detached (the server at {three_ranks.addr} went away)"))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and "Traceback" not in child.logfile_read.getvalue()


def test_plain_attach_left_by_ctrl_c_at_its_prompt_gives_the_terminal_back_as_it_found_it(three_ranks: Mesh) -> None:
    """readline's settings (no echo, no line mode) stayed on the terminal: the shell's next
    program could not read a line (`meshdbg list`'s server menu waited for good)."""
    shell = f"{sys.executable} -m meshdbg attach --plain 0; stty -a"
    child = PtyChild(["bash", "--norc", "-c", shell], env=three_ranks.env, timeout=WAIT_S)
    try:
        child.expect(re.escape("(Pdb)"))
        child.sendintr()
        child.expect("meshdbg: interrupted")
        child.expect(pexpect.EOF)
        modes = child.logfile_read.getvalue().rsplit("meshdbg: interrupted", 1)[1]
        assert re.search(r"(?<![-\w])icanon\b", modes) and re.search(r"(?<![-\w])echo\b", modes), modes
    finally:
        child.close()


def test_plain_attach_follows_the_rank_across_continue_while_stdin_has_lines(mesh: Mesh) -> None:
    mesh.start_worker(0, then="again")
    mesh.wait_sessions(stopped={0})
    script = "p loss_scale\nc\np second_stop\nc\n"
    result = subprocess.run([sys.executable, "-m", "meshdbg", "attach", "--plain", "0"], env=mesh.env, input=script,
                            capture_output=True, text=True, timeout=WAIT_S)
    assert result.returncode == 0, result.stderr
    assert "0.5" in result.stdout and "waiting for its next stop" in result.stdout
    assert "True" in result.stdout  # read at the second breakpoint
    assert "Traceback" not in result.stderr
    mesh.start_worker(1)  # stops once, then exits
    mesh.wait_sessions(stopped={1})
    result = subprocess.run([sys.executable, "-m", "meshdbg", "attach", "--plain", "1"], env=mesh.env,
                            input="c\np 1\n", capture_output=True, text=True, timeout=WAIT_S)
    assert result.returncode == 0 and "rank 1 (hosts=0,gpus=1) exited; nothing more to attach to" in result.stdout


def continued_spinning(mesh: Mesh, rank: int, bootstrap: bool) -> PtyChild:
    """`attach --plain` to a worker that runs on for 50 s after its stop (started through the
    mesh bootstrap, with an agent stream, or not), once `c` let it run."""
    mesh.start_worker(rank, then="spin", bootstrap=bootstrap)
    mesh.wait_sessions(stopped={rank})
    child = mesh.console("--plain", str(rank))
    child.expect(re.escape("(Pdb)"))
    run(child, "c", "waiting for its next stop")
    return child


def test_plain_attach_on_a_terminal_waits_for_the_next_stop_after_continue_with_no_prompt(mesh: Mesh) -> None:
    """As local pdb after `c`: no prompt while the rank runs; its next stop brings one, and
    its exit ends the attach with no line typed. Ctrl-C meanwhile interrupts the rank (it
    stops where it runs, and the attach is there); once more leaves."""
    mesh.start_worker(0, then="again")
    mesh.wait_sessions(stopped={0})
    child = mesh.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "c", re.escape("waiting for its next stop (Ctrl-C interrupts it)"))
    child.expect(re.escape("(Pdb)"))  # the second breakpoint's prompt, with nothing typed
    run(child, "p second_stop", "True", re.escape("(Pdb)"))
    run(child, "c", "waiting for its next stop")
    child.expect(re.escape("meshdbg: rank 0 (hosts=0,gpus=0) exited; nothing more to attach to"))
    child.expect(pexpect.EOF)
    assert child.logfile_read.getvalue().count("(Pdb)") == 3  # each stop's prompt, and the one after `p`
    child.close()
    assert child.exitstatus == 0

    child = continued_spinning(mesh, 1, bootstrap=True)
    child.sendintr()
    child.expect(re.escape("meshdbg: interrupting rank 1 (hosts=0,gpus=1); Ctrl-C again leaves"))
    child.expect(re.escape("(Pdb)"))  # stopped where it ran
    run(child, "p then", "'spin'", re.escape("(Pdb)"))
    run(child, "c", "waiting for its next stop")
    child.sendintr()
    child.expect("interrupting rank 1")
    child.sendintr()  # before it stops, or at its prompt: leaves either way
    child.expect(re.escape("meshdbg: interrupted"))
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.logfile_read.getvalue()


def test_ctrl_c_after_continue_says_why_a_rank_without_an_agent_stream_cannot_be_interrupted(mesh: Mesh) -> None:
    """A process that only set PYTHONBREAKPOINT runs on after `c` with nothing that reaches it:
    said so (it used to say "it is not running"), and the next Ctrl-C leaves."""
    child = continued_spinning(mesh, 2, bootstrap=False)  # no agent stream
    child.sendintr()
    child.expect(re.escape("meshdbg: rank 2 (hosts=1,gpus=0) could not be interrupted: it has no agent stream"))
    child.sendintr()
    child.expect(re.escape("meshdbg: interrupted"))
    child.expect(pexpect.EOF)


INTERRUPTED, CUT = "*** KeyboardInterrupt", "--KeyboardInterrupt-- (output cut:"  # the command's, the drawing's
PRINTING_FOR_A_MINUTE = "!for i in range(600): print('line', i); __import__('time').sleep(0.1)"


@pytest.mark.parametrize("plain", [False, True], ids=["console", "plain"])
def test_a_long_commands_lines_show_while_it_runs_as_in_local_pdb(three_ranks: Mesh, plain: bool) -> None:
    """Each line as it is printed, not all at the command's end; Ctrl-C then reaches the
    command, in the console and in the plain attach alike."""
    child = three_ranks.console(*(("--plain", "0") if plain else ("0",)))
    prompt = re.escape("(Pdb)" if plain else "(Pdb r0 hosts=0,gpus=0)")
    child.expect(prompt)
    child.sendline(PRINTING_FOR_A_MINUTE)
    child.expect(r"line 3\r+\n")  # well within WAIT_S: the command takes a minute
    three_ranks.wait_sessions(stopped={1, 2}, running={0})  # still running it
    child.sendintr()
    child.expect([re.escape(INTERRUPTED), re.escape(CUT)])  # (CUT: the Ctrl-C came while a line was drawn)
    run(child, "p 6 * 7", "42", prompt)
    assert "line 599" not in child.logfile_read.getvalue()
    run(child, "detach")
    if plain:
        child.expect(pexpect.EOF)


def test_plain_attach_says_when_a_command_cannot_break_in_and_a_second_ctrl_c_leaves(three_ranks: Mesh) -> None:
    """A command that Ctrl-C cannot reach (SIGINT blocked around a sleep: as a call stuck in C):
    one line says so, the next Ctrl-C leaves with one line and no traceback, and the rank
    comes back to its prompt once the call returns, with the command's output."""
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    child.sendline("!import signal, time; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}); "
                   "print('blocked', flush=True); time.sleep(3); signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})")
    child.expect(r"blocked\r+\n")
    child.sendintr()
    child.expect(re.escape("meshdbg: rank 0 (hosts=0,gpus=0) cannot break in yet: it is outside Python code at "))
    child.expect(re.escape("Ctrl-C again leaves (the session stays)"))
    child.sendintr()
    child.expect(re.escape("meshdbg: interrupted"))
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.logfile_read.getvalue()
    three_ranks.wait_sessions(stopped={0, 1, 2})  # the call returned: rank 0 is at its prompt again
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    run(child, "p 6 * 7", "42", re.escape("(Pdb)"))
    run(child, "detach")
    child.expect(pexpect.EOF)


def test_plain_attach_leaves_at_its_prompt_on_ctrl_c_on_a_line_of_its_own(three_ranks: Mesh) -> None:
    """Ctrl-C at the prompt, a line half typed: `meshdbg: interrupted` on a new line (it was
    written onto the typed text), exit status 130, and the session stays stopped."""
    child = three_ranks.console("--plain", "0")
    child.expect(re.escape("(Pdb)"))
    child.send("p 6")
    child.expect("p 6")
    child.sendintr()
    child.expect(r"\nmeshdbg: interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130 and "Traceback" not in child.logfile_read.getvalue()
    three_ranks.wait_sessions(stopped={0, 1, 2})


def test_one_ctrl_c_ends_a_flood_of_output_and_its_command_as_in_local_pdb(three_ranks: Mesh) -> None:
    """A command that prints without end: whether Ctrl-C lands while a piece is drawn (the
    drawing is cut) or between pieces, the command is interrupted and the prompt comes back."""
    child = three_ranks.console("0")
    prompt = re.escape("(Pdb r0 hosts=0,gpus=0)")
    child.expect(prompt)
    child.sendline("!while True: print('flood ' * 20)")
    child.expect(r"(flood ){20}\r+\n")
    child.sendintr()
    child.expect([re.escape(INTERRUPTED), re.escape(CUT)])
    child.expect(prompt)
    child.sendline("p 6 * 7")
    child.expect(r"42\r+\n")
    child.expect(prompt)
    run(child, "detach")


def test_stacks_and_compare_in_the_console(three_ranks: Mesh) -> None:
    child = three_ranks.console()
    child.expect(TOP)
    run(child, "stacks", re.escape("thread MainThread: ranks 0-2 (3)"),
        r"<module>\s+\S*stopping_worker\.py:\d+\s+\[stopped in pdb; from session\]", TOP)
    run(child, "compare all shared_note", re.escape("ranks 0-2 (3): 'the same on every rank'"), TOP)
    run(child, "compare ranks(hosts=0) loss_scale", r"rank 0: 0\.5\s+rank 1: 1\.0", TOP)
    run(child, "compare all missing_name", re.escape("ranks 0-2 (3): error: NameError: name 'missing_name' is not defined"), TOP)
    run(child, "quit", "bye; 3 sessions left as they are")
    child.expect(pexpect.EOF)


PASTE, PASTED = "\x1b[200~", "\x1b[201~"  # a terminal's bracketed paste, as prompt_toolkit asks for it


def test_a_paste_of_several_lines_runs_them_one_at_a_time_as_local_pdb_s_terminal_does(three_ranks: Mesh) -> None:
    """Local pdb in a terminal runs a pasted block line by line; the console took it as one
    line of several, which pdb refused (`*** SyntaxError`). Each line now runs at its own
    prompt, a console command among them at `meshdbg>`; what follows the last newline stays
    typed; a refused console line waits for its fix with the rest of the paste behind it; and
    Ctrl-C drops what the paste has left, as a terminal's drops unread input."""
    child = three_ranks.console()
    child.expect(TOP)
    run(child, "attach 1", re.escape("(Pdb r1"))
    child.send(f"{PASTE}p loss_scale\rp loss_scale * 4\rdetach\rlsit\rcast 0 p loss_sc{PASTED}")
    child.expect(r"p loss_scale\S*\s+\S*1\.0")
    child.expect(r"p loss_scale \* 4\S*\s+\S*4\.0")
    child.expect("detached from rank 1")
    child.expect("unknown command 'lsit'")  # kept for editing; the rest of the paste waits behind it
    child.sendcontrol("u")
    child.sendline("list")
    child.expect(r"1\s+worker\s+hosts=0,gpus=1\s+stopped")
    child.expect(re.escape("cast 0 p loss_sc"))  # the last, partial line: typed, not run
    child.send("ale\r")
    child.expect(r"rank 0:\s+0\.5")
    run(child, "attach 2", re.escape("(Pdb r2"))
    child.send(f"{PASTE}!print('slow', flush=True); import time; time.sleep(30)\rp loss_scale * 8\r{PASTED}")
    child.expect(r"slow\r+\n")
    three_ranks.wait_sessions(stopped={0, 1}, running={2})  # still running it
    child.sendintr()
    child.expect("KeyboardInterrupt")
    run(child, "p 'next'", "'next'")
    assert "12.0" not in child.logfile_read.getvalue()  # the paste's second line never ran
    run(child, "detach", TOP)
    run(child, "quit", "bye")
    child.expect(pexpect.EOF)
    assert "Traceback" not in child.logfile_read.getvalue()
