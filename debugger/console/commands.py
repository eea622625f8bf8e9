"""The console's commands: each one is a `do_<name>` method with everything that belongs to it.

As in CPython's Lib/cmd.py and Lib/pdb.py, a command is found by name and keeps its parts
together, side by side in `Commands`:
- `do_<name>(arg)` runs it; its docstring is its help, the first line the usage with the alias
  in parentheses (`l(ist)`); aliases are assignments (`do_l = do_list`);
- `parse_<name>(arg)` (optional) checks and parses the argument, raising `LineError` at the
  offending character, so the validator refuses a typo at Enter, the cursor on it, with the
  very code the command runs;
- `complete_<name>(board, arg)` (optional) offers what Tab may put at the end of `arg`, from
  what the console's board knows of the mesh.
`check_line`, `completions_for` and `help_overview` find those parts by name; adding a
command is adding its methods here and nothing else.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import pdb
import re
import shlex
from typing import Awaitable, Callable, Iterable, Protocol

from meshdbg.debugger.console.board import Board
from meshdbg.debugger.console.lines import (LineError, optional_selection, past_selection, selection_then,
                                            split_line)
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.format import grouped_cast_output, not_resumed_text, resumed_text, session_table, worker_table
from meshdbg.debugger.selection import AttachTarget, parse_attach_target, parse_selection, ranks_text
from meshdbg.debugger.interruption import interrupt
from meshdbg.debugger.stack_tree import stack_tree
from meshdbg.debugger.value_groups import left_out, value_groups, value_text
from meshdbg.wire.errors import TargetError

__all__ = ["Commands", "ConsoleActions", "LineError", "PDB_COMMANDS", "aliases", "check_line", "command_names",
           "completions_for", "help_overview", "resolve_command"]

THREADS_FLAG, THREADS_MAIN, THREADS_ALL = "--threads", "main", "all"
ALL_FLAG = "--all"  # list: every worker, not only sessions
PDB_COMMANDS = frozenset(name[3:] for name in dir(pdb.Pdb) if name.startswith("do_"))
CLEAR_FLAG = "--clear"
LIST_FLAG = "--list"  # break: show the action breakpoints


def _unquoted(text: str, meant: Callable[[str], bool]) -> str | None:
    """What `text` holds when all of it is one quoted word, as a shell needs it on the command
    line (`meshdbg cast all 'p loss'`), that `meant` takes for what the command wants; else None."""
    if text[:1] not in ("'", '"'):
        return None
    try:
        words = shlex.split(text)
    except ValueError:  # an unclosed quote: pdb says what it makes of it
        return None
    return words[0] if len(words) == 1 and words[0].strip() and meant(words[0]) else None


def _pdb_command(text: str) -> bool:
    """`text` starts with a pdb command (`p loss`, `n`, `!x = 1`)."""
    first = text.split(maxsplit=1)[0]
    return first in PDB_COMMANDS or first.startswith("!")


def _expression(text: str) -> bool:
    """`text` is a Python expression (`loss.item()`)."""
    try:
        compile(text, "<compare>", "eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _refuse_shell_quotes(verb: str, arg: str, selection: str, rest: str, meant: Callable[[str], bool]) -> None:
    """LineError, at the opening quote, when `rest` (what `verb` takes after `selection` in
    `arg`) is quoted whole as a shell needs it: with no shell to take the quotes off, pdb took
    it for a string (`cast` printed it back on every rank, `compare` found every rank alike)."""
    inner = _unquoted(rest, meant)
    if inner is not None:
        raise LineError(f"pdb would get the quotes too (no shell takes them off here): {verb} {selection} {inner}",
                        arg.index(rest, len(selection)))


class ConsoleActions(Protocol):
    """What commands may ask of the console that runs them."""

    async def client(self) -> ControlClient:
        """The control API, reconnected first if the server was lost."""

    async def attach(self, target: AttachTarget) -> None:
        """Enter pdb mode on the target session."""

    def say(self, text: str) -> None:
        """Print a line for the user."""

    def ranks_held(self) -> contextlib.AbstractContextManager[None]:
        """While inside, the ranks' output waits (a moment at most), so that what is said of a
        command that lets ranks run comes before what they print."""

    async def show_pdb(self, text: str) -> None:
        """Print pdb output (source highlighted when colour is on); Ctrl-C cuts a long one short."""

    def farewell(self) -> str:
        """What quit says: what happens to the sessions (and the job) once the console closes."""

    async def stop_job(self) -> bool:
        """End the `meshdbg run` job (confirmed first if ranks still run); True if it is stopping."""


def _selections(board: Board, arg: str) -> list[str]:
    """What may come next in a selection: `all`, `ranks(`, ranks, and `dim=` inside `ranks(`."""
    ranks = [str(r) for r in board.ranks()]
    if arg.count("(") > arg.count(")"):
        return ranks + [f"{dim}=" for dim in board.dims()]
    return ["all", "ranks("] + ranks


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

    # ---- list -------------------------------------------------------------------------

    async def do_list(self, arg: str) -> None:
        """l(ist) [--all] [selection]
        Show the sessions: rank, coordinates, state, where each stopped. With --all, every
        worker instead, running, stopped or exited (with its exit status), as `meshdbg list
        --all`. With a selection, only those ranks (e.g. list ranks(hosts=1)).
        """
        every, text = self.parse_list(arg)
        client = await self.console.client()
        workers = await client.workers() if every else []
        sessions = [] if every else await client.list()
        if text:
            selection = parse_selection(text)
            workers = [v for v in workers if selection.matches(v.rank, v.coords)]
            sessions = [v for v in sessions if selection.matches(v.rank, v.coords)]
        self.console.say(worker_table(workers) if every else session_table(sessions))

    @staticmethod
    def parse_list(arg: str) -> tuple[bool, str]:
        """`[--all] [selection]` → (every worker?, the selection, checked)."""
        every = arg == ALL_FLAG or arg.startswith(ALL_FLAG + " ")
        rest = arg[len(ALL_FLAG):] if every else arg
        try:
            return every, optional_selection(rest)
        except LineError as exc:
            raise exc.shifted(len(arg) - len(rest)) from None

    @staticmethod
    def complete_list(board: Board, arg: str) -> Iterable[str]:
        """`--all` first, then a selection."""
        every = arg.startswith(ALL_FLAG + " ")
        return _selections(board, arg[len(ALL_FLAG):] if every else arg) + ([] if every else [ALL_FLAG])

    # ---- attach / detach ----------------------------------------------------------------

    async def do_attach(self, arg: str) -> None:
        """a(ttach) <rank> [thread] | attach <name> <rank> [thread] | attach #<session id>
        Drive one stopped rank's pdb from here: every line you type goes to that rank, Tab
        completes in its frame. A rank stopped in several threads: name one (its name or id,
        as list shows them), else the first that stopped. `detach` or Ctrl-D come back here
        and leave it paused.
        """
        await self.console.attach(self.parse_attach(arg))

    @staticmethod
    def parse_attach(arg: str) -> AttachTarget:
        """`2`, `2 sidekick`, `trainer 2` or `#12`."""
        try:
            return parse_attach_target(arg)
        except TargetError as exc:
            raise LineError(exc.problem, exc.position) from None

    @staticmethod
    def complete_attach(board: Board, arg: str) -> list[str]:
        """Ranks and worker names; after a name, that worker's ranks; after a rank, its threads."""
        words = arg.split()
        done = words if arg.endswith(" ") else words[:-1]  # the words before the one being typed
        if not done:
            return [str(r) for r in board.ranks()] + board.names()
        rank = done[-1] if done[-1].isdigit() else None
        if rank is not None and len(done) <= 2:
            return board.threads(int(rank))
        return [str(s.rank) for s in board.live.values() if s.name == done[0]] if len(done) == 1 else []

    async def do_detach(self, arg: str) -> None:
        """detach
        Leave the attached rank paused and come back to meshdbg> (also Ctrl-D).
        """
        self.console.say("not attached to any rank (attach <rank> first)")

    # ---- cast -------------------------------------------------------------------------

    async def do_cast(self, arg: str) -> None:
        """cast <selection> <pdb command>
        Run a pdb command on every selected stopped rank at once; identical outputs are
        printed once under their rank set. Ctrl-C stops waiting. Selections: all, 3, 0,3-5,
        ranks(1,4,6), ranks(2:10:2), ranks(hosts=1, gpus=0:4), ranks(gpus=(0,3)).
        """
        selection, command = self.parse_cast(arg)
        results = await (await self.console.client()).cast(selection, command)
        await self.console.show_pdb(grouped_cast_output(results))

    @staticmethod
    def parse_cast(arg: str) -> tuple[str, str]:
        """`<selection> <pdb command>` → (selection, command); one quoted whole as a shell
        needs it (`meshdbg cast all 'p loss'`) is refused (`_refuse_shell_quotes`)."""
        selection, command = selection_then(arg, "cast", "a pdb command", "p loss")
        _refuse_shell_quotes("cast", arg, selection, command, _pdb_command)
        return selection, command

    @staticmethod
    def complete_cast(board: Board, arg: str) -> Iterable[str]:
        """A selection, then the pdb command's name."""
        rest = past_selection(arg)
        if rest is None:
            return _selections(board, arg)
        return PDB_COMMANDS if " " not in rest.lstrip() else []

    # ---- stacks / compare -----------------------------------------------------------------

    async def do_stacks(self, arg: str) -> None:
        """stacks [selection] [--threads all]
        Where every selected (default: every) rank is now, running, stopped or stuck: their
        Python stacks merged into one tree, each branch labelled with its ranks, the odd ones
        out marked. A rank stuck in C is sampled from outside with py-spy.
        """
        selection, all_threads = self.parse_stacks(arg)
        self.console.say(stack_tree(await (await self.console.client()).stacks(selection, all_threads)))

    @staticmethod
    def parse_stacks(arg: str) -> tuple[str, bool]:
        """`[selection] [--threads main|all]` → (selection, every thread?)."""
        text, flag, threads = arg.partition(THREADS_FLAG)
        if flag and threads.strip() not in (THREADS_MAIN, THREADS_ALL):
            raise LineError(f"{THREADS_FLAG} takes {THREADS_MAIN} or {THREADS_ALL}", len(text) + len(flag))
        return optional_selection(text), threads.strip() == THREADS_ALL

    @staticmethod
    def complete_stacks(board: Board, arg: str) -> Iterable[str]:
        """A selection, then `--threads`, then main or all."""
        if arg.rstrip().endswith(THREADS_FLAG):
            return [THREADS_MAIN, THREADS_ALL]
        return _selections(board, arg) + [THREADS_FLAG]

    async def do_compare(self, arg: str) -> None:
        """compare <selection> <expression>
        Evaluate a Python expression in every selected stopped rank's current frame (in each
        thread of a rank stopped in several) and group the ranks by equal value, largest group
        first, outliers marked, errors apart; the selected ranks not evaluated (running,
        exited) are named. Tensors and arrays are compared by a summary (shape, dtype,
        min/max/mean, NaN/inf counts, a checksum).
        """
        selection, expression = self.parse_compare(arg)
        client = await self.console.client()
        results = await client.compare(selection, expression)
        self.console.say(value_text(value_groups(results), left_out(selection, await client.workers(), results)))

    @staticmethod
    def parse_compare(arg: str) -> tuple[str, str]:
        """`<selection> <expression>` → (selection, expression); one quoted whole as a shell
        needs it (`'loss'`) is refused, as `cast` refuses a quoted command."""
        selection, expression = selection_then(arg, "compare", "an expression", "loss")
        _refuse_shell_quotes("compare", arg, selection, expression, _expression)
        return selection, expression

    @staticmethod
    def complete_compare(board: Board, arg: str) -> Iterable[str]:
        """A selection (the expression is the user's)."""
        return _selections(board, arg) if past_selection(arg) is None else []

    # ---- continue -----------------------------------------------------------------------

    async def do_continue(self, arg: str) -> None:
        """c(ontinue) [--clear] [selection]
        Resume the selected (default: every) stopped rank. Its breakpoints stay, as after `c`
        in local pdb, so it stops at the next one; --clear forgets them first.
        """
        selection, clear = self.parse_continue(arg)
        with self.console.ranks_held():  # "resumed" before what the ranks print once resumed
            resumed = await (await self.console.client()).resume(selection, clear_breakpoints=clear)
            self.console.say(resumed_text(resumed))
            if resumed.no_answer:  # (it said nothing of them)
                self.console.say(f"no answer from {ranks_text(resumed.no_answer)}: the resume was sent, and takes "
                                  f"effect if it reaches them (`list` shows whether they are answering)")
            if resumed.not_resumed:
                self.console.say(not_resumed_text(resumed.not_resumed))

    @staticmethod
    def parse_continue(arg: str) -> tuple[str, bool]:
        """`[--clear] [selection]` → (selection, whether to forget breakpoints first)."""
        stripped = arg.strip()
        clear = stripped.split(maxsplit=1)[:1] == [CLEAR_FLAG]
        selection = stripped.removeprefix(CLEAR_FLAG).lstrip() if clear else stripped
        try:
            return optional_selection(selection), clear
        except LineError as exc:
            raise exc.shifted(len(arg) - len(arg.lstrip()) + len(stripped) - len(selection)) from None

    @staticmethod
    def complete_continue(board: Board, arg: str) -> list[str]:
        """`--clear` first, then a selection."""
        return ([CLEAR_FLAG] if not arg.strip() else []) + _selections(board, arg.removeprefix(CLEAR_FLAG).lstrip())

    # ---- interrupt ------------------------------------------------------------------------

    async def do_interrupt(self, arg: str) -> None:
        """interrupt <selection>
        Break the selected ranks into pdb: a running rank stops where it is; a rank running a
        command (n over a long loop) stops at its next line, as Ctrl-C in local pdb. Says which
        ranks stopped, and which could not yet and why (outside Python code, already stopped).
        """
        self.console.say((await interrupt(await self.console.client(), self.parse_interrupt(arg))).text())

    @staticmethod
    def parse_interrupt(arg: str) -> str:
        """A selection (required: interrupting every rank by accident stops the whole mesh)."""
        if not arg.strip():
            raise LineError("interrupt needs a selection, e.g. interrupt 3 or interrupt all", 0)
        return optional_selection(arg)

    complete_interrupt = staticmethod(_selections)

    # ---- pipeline -------------------------------------------------------------------------

    async def do_break(self, arg: str) -> None:
        """break <selection> <action>... | break --list [selection] | break --clear [selection]
        Stop the selected pipeline ranks in pdb right before an action of their schedule, each
        time it comes until cleared: 3B5, 3F* (any microbatch), *B5 (any stage), W (every W).
        An F stops in the stage's forward; other actions where the runtime runs them.
        """
        from meshdbg.debugger.pipeline_view import breaks_text  # the pipeline's parts load when used

        selection, actions, flag = self.parse_break(arg)
        client = await self.console.client()
        self.console.say(breaks_text(await client.pipeline(selection, actions, clear_breaks=flag == CLEAR_FLAG), actions))

    @staticmethod
    def parse_break(arg: str) -> tuple[str, list[str], str]:
        """→ (selection, action patterns to add, `--list`/`--clear` or "")."""
        from meshdbg.worker.pipelining.errors import ActionParseError
        from meshdbg.worker.pipelining.ir import parse_action_pattern

        flag = arg.split(maxsplit=1)[0] if arg.strip() else ""
        if flag in (LIST_FLAG, CLEAR_FLAG):
            rest = arg.strip()[len(flag):]
            try:
                return optional_selection(rest), [], flag
            except LineError as exc:
                raise exc.shifted(len(arg.strip()) - len(rest)) from None
        selection, rest = selection_then(arg, "break", "an action", "3B5")
        start = len(arg.rstrip()) - len(rest)
        actions = []
        for word in re.finditer(r"\S+", rest):
            if word.group()[0] in "'\"":
                raise LineError("an action takes no quotes here (they are the shell's): type it bare, e.g. *B5",
                                start + word.start())
            if word.group() in (LIST_FLAG, CLEAR_FLAG):  # as `meshdbg break` may take it, after the selection
                raise LineError(f"{word.group()} comes first and takes a selection, no action: "
                                f"break {word.group()} {selection}", start + word.start())
            try:
                actions.append(str(parse_action_pattern(word.group())))
            except ActionParseError as exc:
                raise LineError(str(exc), start + word.start()) from None
        return selection, actions, ""

    @staticmethod
    def complete_break(board: Board, arg: str) -> Iterable[str]:
        """`--list`, `--clear` or a selection (the actions are the schedule's)."""
        return _selections(board, arg) + [LIST_FLAG, CLEAR_FLAG] if past_selection(arg) is None else []

    async def do_pipeline(self, arg: str) -> None:
        """pipeline [selection]
        Where every pipeline rank is in its schedule: step, actions done/left, the action it
        runs or waits in (a RECV names the peer's SEND), then what holds up a stall, in one line.
        """
        from meshdbg.debugger.pipeline_view import pipeline_table

        self.console.say(pipeline_table(await (await self.console.client()).pipeline(optional_selection(arg))))

    parse_pipeline = staticmethod(optional_selection)
    complete_pipeline = staticmethod(_selections)

    # ---- help / quit --------------------------------------------------------------------

    async def do_help(self, arg: str) -> None:
        """h(elp) [command]
        List the commands, or show one command's help.
        """
        name = arg.strip()
        if not name:
            self.console.say(help_overview())
            return
        self.console.say(inspect.cleandoc(getattr(Commands, "do_" + resolve_command(name, 0)).__doc__ or ""))

    @staticmethod
    def complete_help(board: Board, arg: str) -> list[str]:
        """The command names."""
        return command_names()

    async def do_quit(self, arg: str) -> bool:
        """q(uit)
        Leave the console; every session stays paused (meshdbg attach comes back to them).
        Under meshdbg run the job runs on and the console opens again at the next stop.
        """
        self.console.say(self.console.farewell())
        return True

    # ---- stop ---------------------------------------------------------------------------

    async def do_stop(self, arg: str) -> bool:
        """stop
        End the meshdbg run job: every rank is stopped, the launcher exits. Asks first when
        ranks are still running. (Ctrl-C twice at meshdbg> does the same without asking.)
        """
        return await self.console.stop_job()

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


def check_line(line: str) -> tuple[str, str]:
    """(command, argument) for a console line, ("", "") for a blank one; LineError otherwise.

    The argument is checked by the command's own `parse_<name>`, when it has one."""
    word, arg, arg_start = split_line(line)
    if not word:
        return "", ""
    name = resolve_command(word, len(line) - len(line.lstrip()))
    parse: Callable[[str], object] | None = getattr(Commands, "parse_" + name, None)
    if parse is not None:
        try:
            parse(arg)
        except LineError as exc:
            raise exc.shifted(arg_start) from None
    return name, arg


def completions_for(board: Board, before: str) -> Iterable[str]:
    """Candidates for the word ending `before` (a console line up to the cursor): command
    names for the first word, else what the command's `complete_<name>` offers."""
    if not re.search(r"\s", before.lstrip()):
        return command_names()
    first, _, arg_start = split_line(before)
    complete: Callable[[Board, str], Iterable[str]] | None = getattr(
        Commands, "complete_" + aliases().get(first, first), None)
    return complete(board, before[arg_start:]) if complete is not None else []


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
