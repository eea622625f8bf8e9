"""The console's commands: one `do_<name>` method each, whose docstring is its help.

As in CPython's Lib/cmd.py and Lib/pdb.py: the first docstring line is the usage, with the
alias in parentheses (`l(ist)`), the rest explains; aliases are assignments (`do_l = do_list`).
Parsing is pure and shared with the validator and the completer: `check_line` splits a
line into a command and its argument, and the argument parsers raise `LineError` pointing at
the offending character, so a typo is reported at the cursor before anything runs.
"""

from __future__ import annotations

import difflib
import inspect
import pdb
from typing import Awaitable, Callable, Protocol

from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import PositionedError, SelectionError, TargetError
from meshdbg.debugger.format import grouped_cast_output, resumed_text, session_table
from meshdbg.debugger.selection import AttachTarget, parse_attach_target, parse_selection

PDB_COMMANDS = frozenset(name[3:] for name in dir(pdb.Pdb) if name.startswith("do_"))


class LineError(PositionedError):
    """A console line that cannot run: what is wrong, and where in the line (for the cursor)."""

    def shifted(self, offset: int) -> "LineError":
        """The same error for the text this one's text starts at `offset` of."""
        return LineError(self.problem, self.position + offset)


class ConsoleActions(Protocol):
    """What commands may ask of the console that runs them."""

    async def client(self) -> ControlClient:
        """The control API, reconnected first if the server was lost."""

    async def attach(self, target: AttachTarget) -> None:
        """Enter pdb mode on the target session."""

    def say(self, text: str) -> None:
        """Print a line for the user."""

    def show_pdb(self, text: str) -> None:
        """Print pdb output (source highlighted when colour is on)."""

    def live_count(self) -> int:
        """How many sessions are live right now."""


def _check_selection(text: str) -> None:
    try:
        parse_selection(text)
    except SelectionError as exc:
        raise LineError(exc.problem, exc.position) from None


def selection_end(arg: str) -> int:
    """Where the selection at the start of `arg` ends: after `ranks(...)`, else at whitespace."""
    if arg.startswith("ranks("):
        depth = 0
        for index, char in enumerate(arg):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0 and char == ")":
                return index + 1
        raise LineError("unclosed ranks( — close it with )", len(arg))
    return len(arg.split(maxsplit=1)[0]) if arg.strip() else 0


def parse_cast(arg: str) -> tuple[str, str]:
    """`<selection> <pdb command>` → (selection, command)."""
    if not arg.strip():
        raise LineError("cast needs a selection and a pdb command, e.g. cast all p loss", 0)
    end = selection_end(arg)
    selection, command = arg[:end], arg[end:].strip()
    _check_selection(selection)
    if not command:
        raise LineError(f"cast needs a pdb command after the selection, e.g. cast {selection} p loss", len(arg))
    return selection, command


def parse_continue(arg: str) -> str:
    """An optional selection (default: every stopped rank)."""
    if arg.strip():
        _check_selection(arg)
    return arg.strip()


def parse_attach(arg: str) -> AttachTarget:
    """`2`, `trainer 2` or `#12`."""
    try:
        return parse_attach_target(arg)
    except TargetError as exc:
        raise LineError(exc.problem, exc.position) from None


ARGUMENT_PARSERS: dict[str, Callable[[str], object]] = {
    "attach": parse_attach, "cast": parse_cast, "continue": parse_continue, "list": parse_continue,
}


class Commands:
    """The console commands; `run` dispatches one line to its `do_` method."""

    def __init__(self, console: ConsoleActions) -> None:
        self.console = console

    async def run(self, line: str) -> bool:
        """Run one console line; True means the console should leave."""
        name, arg = check_line(line)
        if not name:
            return False
        handler: Callable[[str], Awaitable[bool | None]] = getattr(self, "do_" + name)
        return bool(await handler(arg))

    async def do_list(self, arg: str) -> None:
        """l(ist) [selection]
        Show the sessions: rank, coordinates, state, where each stopped. With a selection,
        only those ranks (e.g. list ranks(hosts=1)).
        """
        sessions = await (await self.console.client()).list()
        if arg:
            selection = parse_selection(arg)
            sessions = [s for s in sessions if selection.matches(s.rank, s.coords)]
        self.console.say(session_table(sessions))

    async def do_attach(self, arg: str) -> None:
        """a(ttach) <rank> | attach <name> <rank> | attach #<session id>
        Drive one stopped rank's pdb from here: every line you type goes to that rank, Tab
        completes in its frame. `detach` or Ctrl-D come back here and leave it paused.
        """
        await self.console.attach(parse_attach(arg))

    async def do_detach(self, arg: str) -> None:
        """detach
        Leave the attached rank paused and come back to meshdbg> (also Ctrl-D).
        """
        self.console.say("not attached to any rank (attach <rank> first)")

    async def do_cast(self, arg: str) -> None:
        """cast <selection> <pdb command>
        Run a pdb command on every selected stopped rank at once; identical outputs are
        printed once under their rank set. Ctrl-C stops waiting. Selections: all, 3, 0,3-5,
        ranks(1,4,6), ranks(2:10:2), ranks(hosts=1, gpus=0:4), ranks(gpus=(0,3)).
        """
        selection, command = parse_cast(arg)
        results = await (await self.console.client()).cast(selection, command)
        self.console.show_pdb(grouped_cast_output(results))

    async def do_continue(self, arg: str) -> None:
        """c(ontinue) [selection]
        Resume the selected (default: every) stopped rank; its breakpoints are cleared.
        """
        resumed = await (await self.console.client()).resume(parse_continue(arg))
        self.console.say(resumed_text(resumed))

    async def do_help(self, arg: str) -> None:
        """h(elp) [command]
        List the commands, or show one command's help.
        """
        name = arg.strip()
        if not name:
            self.console.say(help_overview())
            return
        resolved = resolve_command(name, 0)
        self.console.say(inspect.cleandoc(getattr(Commands, "do_" + resolved).__doc__ or ""))

    async def do_quit(self, arg: str) -> bool:
        """q(uit)
        Leave the console; every session stays paused (meshdbg attach comes back to them).
        """
        count = self.console.live_count()
        self.console.say(f"bye; {count} session{'s' if count != 1 else ''} left as they are")
        return True

    do_l = do_list
    do_a = do_attach
    do_c = do_continue
    do_h = do_help
    do_q = do_quit


def command_names() -> list[str]:
    """The console's commands, each by its full name (aliases left out)."""
    return sorted(name[3:] for name, func in vars(Commands).items()
                  if name.startswith("do_") and func.__name__ == name)


def aliases() -> dict[str, str]:
    """Alias → full command name, from the `do_x = do_xyz` assignments."""
    return {name[3:]: func.__name__[3:] for name, func in vars(Commands).items()
            if name.startswith("do_") and func.__name__ != name}


def resolve_command(word: str, position: int) -> str:
    """The full command name for `word`, or a LineError with a suggestion."""
    table = aliases()
    if word in table or word in command_names():
        return table.get(word, word)
    if word in PDB_COMMANDS:
        raise LineError(f"{word!r} is a pdb command: attach <rank> first, or cast <selection> {word} ...", position)
    close = difflib.get_close_matches(word, command_names() + list(table), n=1, cutoff=0.5)
    hint = f"did you mean {table.get(close[0], close[0])!r}?" if close else "help lists the commands"
    raise LineError(f"unknown command {word!r}: {hint}", position)


def split_line(line: str) -> tuple[str, str, int]:
    """(first word, the rest stripped, where the rest starts in `line`)."""
    stripped = line.lstrip()
    start = len(line) - len(stripped)
    word = stripped.split(maxsplit=1)[0] if stripped else ""
    rest_start = start + len(word)
    rest = line[rest_start:]
    return word, rest.strip(), rest_start + len(rest) - len(rest.lstrip())


def check_line(line: str) -> tuple[str, str]:
    """(command, argument) for a console line, ("", "") for a blank one; LineError otherwise."""
    word, arg, arg_start = split_line(line)
    if not word:
        return "", ""
    name = resolve_command(word, len(line) - len(line.lstrip()))
    parser = ARGUMENT_PARSERS.get(name)
    if parser is not None:
        try:
            parser(arg)
        except LineError as exc:
            raise exc.shifted(arg_start) from None
    return name, arg


def help_overview() -> str:
    """Per command: its usage line and the first sentence of its explanation."""
    lines = ["Console commands (help <command> for more; while attached, lines go to pdb):"]
    for name in command_names():
        usage, _, rest = inspect.cleandoc(getattr(Commands, "do_" + name).__doc__ or name).partition("\n")
        lines.append(f"  {usage}\n      {first_sentence(rest)}")
    return "\n".join(lines)


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's explanation, unwrapped."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[: end + 1]
