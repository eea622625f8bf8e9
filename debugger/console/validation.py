"""The prompt's Validator: a malformed console line is refused at Enter, the error shown with its column.

It runs the same parser as the commands (`check_line`, which calls the command's own
`parse_<name>`), so what it accepts is what runs. Lines typed while attached go to pdb unchecked.
"""

from __future__ import annotations

from typing import Callable

from prompt_toolkit.document import Document
from prompt_toolkit.validation import ValidationError, Validator

from meshdbg.debugger.console.commands import check_line
from meshdbg.debugger.console.lines import LineError


class CommandValidator(Validator):
    """Unknown commands (with a suggestion) and bad selections, their column named; while `active()`."""

    def __init__(self, active: Callable[[], bool]) -> None:
        self.active = active

    def validate(self, document: Document) -> None:
        if not self.active():
            return
        try:
            check_line(document.text)
        except LineError as exc:
            # The cursor stays at the end, where the person was typing; the message says where.
            raise ValidationError(cursor_position=len(document.text),
                                  message=f"{exc.problem} (at column {exc.position + 1})") from None
