"""Tab completion: console commands and live ranks at `meshdbg>`, the remote pdb when attached.

At the top prompt it offers command names, then per command what its argument takes: rank
numbers and worker names for `attach`, selections (`all`, ranks, `ranks(`, `dim=` inside it)
for `cast`, `continue` and `list`, pdb command names after a cast's selection. While attached,
the stopped worker's pdb computes the completions in its own frame, as local pdb would.
"""

from __future__ import annotations

import re
from typing import AsyncGenerator, Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from meshdbg.debugger.console.attachment import Attachment
from meshdbg.debugger.console.board import Board
from meshdbg.debugger.console.commands import PDB_COMMANDS, LineError, aliases, command_names, selection_end, split_line
from meshdbg.wire.errors import MeshdbgError

_WORD_TAIL = re.compile(r"[A-Za-z0-9_#]*$")


def _matching(word: str, candidates: Iterable[str]) -> list[Completion]:
    return [Completion(c, start_position=-len(word)) for c in sorted(set(candidates)) if c.startswith(word)]


class ConsoleCompleter(Completer):
    """Completes against the console's board, or through the attached session."""

    def __init__(self, board: Board, attachment: Callable[[], Attachment | None]) -> None:
        self.board = board
        self.attachment = attachment

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        if self.attachment() is None:
            yield from self.console_completions(document.text_before_cursor)

    async def get_completions_async(self, document: Document, complete_event: CompleteEvent
                                    ) -> AsyncGenerator[Completion, None]:
        attachment = self.attachment()
        if attachment is None:
            for completion in self.console_completions(document.text_before_cursor):
                yield completion
            return
        try:
            text, matches = await attachment.complete(document.text, document.cursor_position)
        except MeshdbgError:
            return
        for match in matches:
            yield Completion(match, start_position=-len(text))

    def console_completions(self, before: str) -> list[Completion]:
        """What Tab offers at the top prompt for the text before the cursor."""
        word = _WORD_TAIL.search(before).group()
        if not re.search(r"\s", before.lstrip()):
            return _matching(word, command_names())
        first, _, arg_start = split_line(before)
        command, arg = aliases().get(first, first), before[arg_start:]
        if command == "attach":
            return self._attach(arg, word)
        if command == "cast":
            return self._cast(arg, word)
        if command in ("continue", "list"):
            return self._selection(arg, word)
        if command == "help":
            return _matching(word, command_names())
        return []

    def _attach(self, arg: str, word: str) -> list[Completion]:
        words = arg.split()
        if len(words) >= 2 or (len(words) == 1 and arg.endswith(" ")):
            name = words[0]
            return _matching(word, (str(s.rank) for s in self.board.live.values() if s.name == name))
        return _matching(word, [str(r) for r in self.board.ranks()] + self.board.names())

    def _cast(self, arg: str, word: str) -> list[Completion]:
        try:
            end = selection_end(arg)
        except LineError:
            return self._selection(arg, word)
        if len(arg) <= end:
            return self._selection(arg, word)
        command = arg[end:].lstrip()
        return _matching(word, PDB_COMMANDS) if " " not in command else []

    def _selection(self, arg: str, word: str) -> list[Completion]:
        ranks = [str(r) for r in self.board.ranks()]
        if arg.count("(") > arg.count(")"):
            return _matching(word, ranks + [f"{dim}=" for dim in self.board.dims()])
        return _matching(word, ["all", "ranks("] + ranks)
