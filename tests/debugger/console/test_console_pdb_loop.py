"""pdb's own command loop through the console: its prompts, `commands`, `debug`, `interact`, attach."""

from __future__ import annotations

import re

from console_harness import Mesh
from test_console_pty import TOP, run

PDB = re.escape("(Pdb r0 hosts=0,gpus=0)")
CTRL_D = "\x04"
LIKE = re.escape("(Pdb-like)")  # a program's prompt (its trailing space is drawn by a cursor move)


def test_pdb_prompts_interact_and_debug_as_pdb_shows_them(mesh: Mesh) -> None:
    mesh.start_worker(0)
    mesh.wait_sessions(stopped={0})
    child = mesh.console("0")
    child.expect(PDB)
    run(child, "b 17", "Breakpoint 1", PDB)
    run(child, "commands 1", re.escape("(com)"))
    child.send("p 'hit'\r")
    child.expect(re.escape("(com)"))
    run(child, "end", PDB)
    run(child, "debug loss_scale + 1", "ENTERING RECURSIVE DEBUGGER", re.escape("((Pdb r0 hosts=0,gpus=0))"))
    run(child, "n", re.escape("((Pdb r0 hosts=0,gpus=0))"))
    run(child, "c", "LEAVING RECURSIVE DEBUGGER", PDB)
    run(child, "interact", re.escape("*interactive*") + "|interact start", ">>>")
    run(child, "loss_scale * 4", r"2\.0", ">>>")
    child.send(CTRL_D)  # leaves interact, not the rank
    child.expect("exiting InteractiveConsole|exit from pdb interact")
    child.expect(PDB)
    run(child, "p loss_scale", r"0\.5", PDB)
    run(child, "detach", TOP)
    run(child, "attach 0", r"-> (if then == .again.:|breakpoint\(\))", r"0\.5", PDB)  # where it is, then the last output
    assert "Traceback" not in child.logfile_read.getvalue()


def test_a_prompt_the_program_words_like_pdb_is_still_the_programs(mesh: Mesh) -> None:
    """Who reads the next line comes with the prompt: a program's `interact` prompt that says
    `Pdb` is shown as the program set it, and Ctrl-D there ends `interact`, not the attach."""
    mesh.start_worker(0)
    mesh.wait_sessions(stopped={0})
    child = mesh.console("0")
    child.expect(PDB)
    run(child, "interact", re.escape("*interactive*") + "|interact start", ">>>")
    run(child, "import sys; sys.ps1 = '(Pdb-like) '", LIKE)
    run(child, "loss_scale * 4", r"2\.0", LIKE)
    assert "Pdb r0" not in child.before  # the rank's label goes in pdb's prompts only
    child.send(CTRL_D)  # leaves interact, not the rank
    child.expect("exiting InteractiveConsole|exit from pdb interact")
    child.expect(PDB)
    run(child, "p loss_scale", r"0\.5", PDB)
    assert "Traceback" not in child.logfile_read.getvalue()
