"""The console's two prompts: `meshdbg>` for console commands, `(Pdb ...)` for an attached rank.

Each has a history file of its own, so up-arrow at `meshdbg>` never brings back a pdb line
and the reverse: `MESHDBG_HISTORY` (else ~/.meshdbg/history) and the same name with `-pdb`.
Both files are private (0600, in a 0700 folder): typed lines can hold secrets. Both prompts
share the completer, the toolbar and the key bindings; the validator runs at `meshdbg>` only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer
from prompt_toolkit.history import FileHistory, ThreadedHistory
from prompt_toolkit.validation import Validator

from meshdbg.debugger.console.bindings import load_console_bindings
from meshdbg.debugger.console.highlight import STYLE
from meshdbg.wire.connection import private_dir, private_file
from meshdbg.wire.environment import HISTORY

PDB_HISTORY_SUFFIX = "-pdb"


def history_path(suffix: str = "") -> Path:
    """`MESHDBG_HISTORY`, else ~/.meshdbg/history, plus `suffix`: a private file in a private folder."""
    path = HISTORY.get() or private_dir(Path.home() / ".meshdbg") / "history"
    if not path.parent.exists():
        private_dir(path.parent)
    return private_file(path.with_name(path.name + suffix))


def make_prompts(message: Callable[[], str], toolbar: Callable[[], str], completer: Completer,
                 validator: Validator) -> tuple[PromptSession[str], PromptSession[str]]:
    """(the `meshdbg>` prompt, the pdb prompt)."""
    def prompt(history: Path, pdb: bool) -> PromptSession[str]:
        return PromptSession(
            message=message, bottom_toolbar=toolbar, style=STYLE, completer=completer, complete_while_typing=False,
            validator=None if pdb else validator, validate_while_typing=False,
            history=ThreadedHistory(FileHistory(str(history))), key_bindings=load_console_bindings(pdb))

    return prompt(history_path(), False), prompt(history_path(PDB_HISTORY_SUFFIX), True)
