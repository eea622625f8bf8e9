"""The console while pdb runs a command: stepping onto breakpoint(), Ctrl-C, a rank stuck in C."""

from __future__ import annotations

import re

from console_harness import Mesh
from test_console_pty import TOP, run

PDB = re.escape("(Pdb r0 hosts=0,gpus=0)")


def _open_past_breakpoint(mesh: Mesh):
    """The console attached to rank 0, on the line after breakpoint() (3.13 stops on it)."""
    child = mesh.console("0")
    if child.expect([r"-> breakpoint\(\)", r"-> if then =="]) == 0:
        child.expect(PDB)
        run(child, "n", r"-> if then ==")
    child.expect(PDB)
    return child


def test_stepping_onto_breakpoint_keeps_the_prompt_and_one_session(mesh: Mesh) -> None:
    mesh.start_worker(0, then="loop")
    mesh.wait_sessions(stopped={0})
    child = _open_past_breakpoint(mesh)
    run(child, "n", r"\(20\)<module>\(\)", PDB)
    run(child, "n", r"-> for step in range", PDB)
    for _ in range(4):  # onto the breakpoint() line and over it, round the loop (the same positions as local pdb)
        run(child, "n", r"-> (breakpoint\(\)|for step in range)", PDB)
    run(child, "p step", r"\D[012]\r+\n", PDB)
    sessions = mesh.wait_sessions(stopped={0})
    assert len(sessions) == 1
    run(child, "detach", TOP)
    run(child, "list", r"0\s+worker\s+hosts=0,gpus=0\s+stopped", TOP)
    assert child.logfile_read.getvalue().count("hosts=0,gpus=0  stopped") == 1


def test_ctrl_c_during_n_over_a_long_loop_stops_it_and_gives_the_pdb_prompt_back(mesh: Mesh) -> None:
    mesh.start_worker(0, then="long")
    mesh.wait_sessions(stopped={0})
    child = _open_past_breakpoint(mesh)
    child.sendline("until 27")  # over the whole loop
    mesh.wait_sessions(running={0})
    child.sendcontrol("c")
    child.expect("Program interrupted")
    child.expect(PDB)
    run(child, "p total > 0", "True", PDB)
    run(child, "detach", TOP)
    assert "Traceback" not in child.logfile_read.getvalue()


def test_ctrl_c_on_a_rank_blocked_in_c_gives_the_prompt_back_and_it_returns_when_stopped(mesh: Mesh) -> None:
    mesh.start_worker(0, then="long")
    mesh.wait_sessions(stopped={0})
    child = _open_past_breakpoint(mesh)
    run(child, "j 27", PDB)  # past the long loop, onto time.sleep(4)
    run(child, "p then", "'long'", PDB)
    child.sendline("n")
    mesh.wait_sessions(running={0})
    child.sendcontrol("c")
    child.expect("cannot break in yet: it is outside Python code at stopping_worker.py:27")
    child.expect(TOP)
    run(child, "list", r"0\s+worker\s+hosts=0,gpus=0\s+running", TOP)
    child.expect("Program interrupted", timeout=10)  # the sleep returned: it comes back here
    child.expect(PDB)
    run(child, "p slept", "True|NameError", PDB)


def test_c_onto_a_silent_breakpoint_comes_back_with_only_what_its_commands_print(mesh: Mesh) -> None:
    """As local pdb: after `c`, the console comes back to the rank's next stop showing what pdb
    printed there, and a `silent` commands block prints no position."""
    mesh.start_worker(0, then="again")
    mesh.wait_sessions(stopped={0})
    child = mesh.console("0")
    child.expect(PDB)
    for line in ["b 18", "commands 1", "silent", "p ('quiet', loss_scale)", "end"]:
        child.sendline(line)
    child.expect(r"\(com\) ")
    child.expect(PDB)
    start = len(child.logfile_read.getvalue())
    run(child, "c", re.escape("('quiet', 0.5)"), PDB)
    came_back = child.logfile_read.getvalue()[start:]
    assert "-> second_stop" not in came_back and "stopping_worker.py(18)" not in came_back
    run(child, "n", r"-> breakpoint\(\)", PDB)  # pdb stood where the block ran
    run(child, "detach", TOP)
