"""pdb's own command loop through the console: its prompts, `commands`, `debug`, `interact`, attach."""

from __future__ import annotations

import re

from console_harness import Mesh
from test_console_pty import TOP, run

PDB = re.escape("(Pdb r0 hosts=0,gpus=0)")
CTRL_D = "\x04"


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
