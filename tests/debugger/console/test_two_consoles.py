"""Two consoles in pseudo-terminals attached to the same rank: each shows the other's lines,
their output (the program's own included) and where the rank stands after them."""

from __future__ import annotations

import re

import pexpect

from console_harness import Mesh
from pty_child import PtyChild

PDB = re.escape("(Pdb r0 hosts=0,gpus=0)")
FLOOD_CHARS = 300_000  # output far past what a pty holds (tens of KB): drawing it waits for the reader


def _two_consoles_on_rank_0(mesh: Mesh) -> tuple[PtyChild, PtyChild]:
    """A stopped rank 0 and two consoles attached to it, each at its pdb prompt."""
    mesh.start_worker(0)
    mesh.wait_sessions(stopped={0})
    first, second = mesh.console("0"), mesh.console("0")
    for console in (first, second):
        console.expect(PDB)
    return first, second


def test_a_second_console_sees_the_first_ones_commands_and_their_output(mesh: Mesh) -> None:
    first, second = _two_consoles_on_rank_0(mesh)
    first.sendline("p loss_scale")
    first.expect(r"0\.5")
    second.expect(re.escape("(Pdb) p loss_scale   [sent by another client]"))
    second.expect(r"0\.5")
    first.sendline("p __import__('os').write(1, b'written to fd 1\\n')")
    first.expect("written to fd 1")  # the program's own output, before pdb's value of the call
    first.expect(r"16\r")
    second.expect("written to fd 1")
    second.expect(r"16\r")
    second.sendline("n")
    first.expect(re.escape("(Pdb) n   [sent by another client]"))
    first.expect(re.escape("-> elif then =="))
    second.expect(PDB)
    assert "(Pdb) n   [sent by another client]" not in second.logfile_read.getvalue()  # its own line


def test_a_prompt_another_console_brought_keeps_its_kind(mesh: Mesh) -> None:
    """The first console's `interact` is the second's too: its Ctrl-D ends `interact` (the
    prompt's kind came with the shared reply), it does not detach."""
    first, second = _two_consoles_on_rank_0(mesh)
    first.sendline("interact")
    first.expect(">>>")
    second.expect(re.escape("(Pdb) interact   [sent by another client]"))
    second.expect(">>>")
    second.send("\x04")  # at once: the `*interactive*` banner may still be being drawn above `>>>`
    for console in (first, second):
        console.expect("exiting InteractiveConsole|exit from pdb interact")
    second.expect(PDB)
    second.sendline("p loss_scale")
    second.expect(r"0\.5")
    first.expect(r"0\.5")


def test_a_key_typed_while_another_consoles_output_is_drawn_reaches_the_prompt(mesh: Mesh) -> None:
    """Ctrl-D typed while the second console draws the first one's output above its `>>>` ends
    `interact` as at any other moment (meshdbg.debugger.console.terminal: it was read as a NUL).
    The output is many times what a pty holds and none of it is read until Ctrl-D is typed, so
    the key comes while it is being drawn, every time."""
    first, second = _two_consoles_on_rank_0(mesh)
    first.sendline("interact")
    for console in (first, second):
        console.expect(re.escape("*interactive*"))
        console.expect(">>>")
    first.sendline(f"'x' * {FLOOD_CHARS}")
    second.expect("x{100}")  # drawing it has begun (the line shown as sent has no such run); the rest waits
    second.send("\x04")
    for console in (second, first):  # the second's drawing first: it goes on once read
        console.expect("exiting InteractiveConsole")
        console.expect(PDB)


def test_a_line_another_console_ran_comes_after_this_ones_reply_not_inside_it(mesh: Mesh) -> None:
    """The first console's reply is many times what a pty holds and is not read while the
    second console runs a line: the second's line and its answer are drawn after the whole
    reply, as one terminal shows them, not somewhere in the middle of it."""
    first, second = _two_consoles_on_rank_0(mesh)
    first.sendline(f"p 'x' * {FLOOD_CHARS}")
    first.expect("x{100}")  # the reply is being drawn; the rest of it waits for the reader
    second.expect(re.escape("[sent by another client]"))
    second.sendline("p 6 * 7")
    second.expect(r"42\r")  # it ran while the first console was still drawing
    first.expect("x'")  # the reply's end
    first.expect(re.escape("(Pdb) p 6 * 7   [sent by another client]"))
    first.expect(r"42\r")
    first.expect(PDB)
