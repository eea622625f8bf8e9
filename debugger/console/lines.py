"""The pure text handling under the console's commands: words, selections, positioned errors.

A `LineError` says what is wrong with a console line and where (the validator puts the cursor
there); the helpers split a line into its command word and argument and find where a
selection ends. No prompt_toolkit, no I/O.
"""

from __future__ import annotations

from meshdbg.debugger.selection import parse_selection
from meshdbg.wire.errors import PositionedError, SelectionError


class LineError(PositionedError):
    """A console line that cannot run: what is wrong, and where in the line (for the cursor)."""

    def shifted(self, offset: int) -> "LineError":
        """The same error for the text this one's text starts at `offset` of."""
        return LineError(self.problem, self.position + offset)


def check_selection(text: str) -> None:
    """A LineError at the offending character unless `text` is a selection."""
    try:
        parse_selection(text)
    except SelectionError as exc:
        raise LineError(exc.problem, exc.position) from None


def optional_selection(arg: str) -> str:
    """An optional selection argument (empty: every rank), checked."""
    if arg.strip():
        check_selection(arg)
    return arg.strip()


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


def selection_then(arg: str, verb: str, what: str, example: str) -> tuple[str, str]:
    """`<selection> <rest>` → (selection, rest) for console command `verb`, whose rest is
    `what` (`a pdb command`, with `example` such as `p loss` in the error)."""
    if not arg.strip():
        raise LineError(f"{verb} needs a selection and {what}, e.g. {verb} all {example}", 0)
    end = selection_end(arg)
    selection, rest = arg[:end], arg[end:].strip()
    check_selection(selection)
    if not rest:
        raise LineError(f"{verb} needs {what} after the selection, e.g. {verb} {selection} {example}", len(arg))
    return selection, rest


def past_selection(arg: str) -> str | None:
    """What follows the selection at the start of `arg`; None while the cursor is still in it
    (completion offers selections there)."""
    try:
        end = selection_end(arg)
    except LineError:  # an unclosed ranks(
        return None
    return arg[end:] if len(arg) > end else None


def split_line(line: str) -> tuple[str, str, int]:
    """(first word, the rest stripped, where the rest starts in `line`)."""
    stripped = line.lstrip()
    start = len(line) - len(stripped)
    word = stripped.split(maxsplit=1)[0] if stripped else ""
    rest_start = start + len(word)
    rest = line[rest_start:]
    return word, rest.strip(), rest_start + len(rest) - len(rest.lstrip())
