"""Tab completion: console commands at `meshdbg>` (each command's `complete_<name>`), the
remote pdb when attached.

At the top prompt the word before the cursor is completed from `completions_for`, which asks
the command being typed what its argument takes. While attached, the stopped worker's pdb
computes the completions in its own frame, as local pdb would.
"""

from __future__ import annotations

import re
from typing import AsyncGenerator, Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from meshdbg.debugger.console.attachment import Attachment
from meshdbg.debugger.console.board import Board
from meshdbg.debugger.console.commands import completions_for
from meshdbg.wire.errors import MeshdbgError

_WORD_TAIL = re.compile(r"(?:--)?[A-Za-z0-9_#]*$")  # a name, a rank, or an option (--all)


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
        tail = _WORD_TAIL.search(before)  # it matches every text, if only the empty end
        word = tail.group() if tail else ""
        candidates = sorted(set(completions_for(self.board, before)))
        return [Completion(c, start_position=-len(word)) for c in candidates if c.startswith(word)]
