"""The console's two prompts: `meshdbg>` for console commands, `(Pdb ...)` for an attached rank.

Each has a history file of its own, so up-arrow at `meshdbg>` never brings back a pdb line
and the reverse: `MESHDBG_HISTORY` (else ~/.meshdbg/history) and the same name with `-pdb`.
Both files are private (0600, in a 0700 folder): typed lines can hold secrets. Both prompts
share the completer, the toolbar and the key bindings; the validator runs at `meshdbg>` only.

Read lines with `read_line`: it puts the history in place before any key is read (`PromptHistory`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import Completer
from prompt_toolkit.filters import has_validation_error
from prompt_toolkit.history import FileHistory
from prompt_toolkit.layout import ConditionalContainer, Window, walk
from prompt_toolkit.validation import Validator

from meshdbg.debugger.console.bindings import PastedLines, leave_search, load_console_bindings
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


class PromptHistory(FileHistory):
    """A prompt's history file, read once at the first prompt (14 ms for 10,000 lines) and then
    kept in memory, which `fill` puts in the prompt's buffer before any key is read.

    prompt_toolkit fills a prompt's buffer from its history in a task started at the prompt's
    first draw. A key typed ahead while the last command ran (and, on uvloop, one read right after
    the draw) is handled before that task runs: an Up found no history and did nothing.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self._lines: list[str] | None = None  # oldest first, once read
        self._filled = False  # `fill` put every line in the buffer for this prompt

    def lines(self) -> list[str]:
        """Every line in the history, oldest first."""
        if self._lines is None:
            self._lines = list(self.load_history_strings())[::-1]
        return self._lines

    def store_string(self, string: str) -> None:
        super().store_string(string)
        self.lines().append(string)

    async def load(self) -> AsyncGenerator[str, None]:
        """prompt_toolkit's own filling, newest first: nothing more if `fill` has filled the buffer."""
        lines = [] if self._filled else self.lines()
        self._filled = False
        for line in reversed(lines):
            yield line

    def fill(self, buffer: Buffer) -> None:
        """Put the history in `buffer`, as prompt_toolkit's task would (it has no public way to)."""
        lines = self.lines()
        buffer._working_lines = deque([*lines, buffer.text])
        buffer.working_index = len(lines)
        buffer.cursor_position = len(buffer.text)
        self._filled = True


async def read_line(session: PromptSession[str], pasted: PastedLines) -> str:
    """The next line typed at `session`, its history in place and no search left open from the
    last line (`leave_search`) before any key is read; the next line of a paste (`pasted`),
    shown at the prompt and entered as if typed there. Ctrl-C raises KeyboardInterrupt and
    Ctrl-D EOFError, for the caller to decide what they mean."""
    history = session.history
    assert isinstance(history, PromptHistory)
    typed, entered = pasted.next()

    def before_any_key() -> None:
        leave_search(session.app)
        history.fill(session.default_buffer)
        if entered:
            asyncio.get_running_loop().call_soon(enter)

    def enter() -> None:  # as Enter does (prompt_toolkit's accept_default drew no refusal: no redraw followed)
        session.default_buffer.validate_and_handle()
        session.app.invalidate()

    return await session.prompt_async(handle_sigint=False, pre_run=before_any_key, default=typed)


def make_prompts(message: Callable[[], str], toolbar: Callable[[], str], completer: Completer,
                 validator: Validator, job_server: bool, pasted: PastedLines
                 ) -> tuple[PromptSession[str], PromptSession[str]]:
    """(the `meshdbg>` prompt, the pdb prompt); `job_server`: this process serves a `meshdbg run`
    job; `pasted`: what a paste left to type, at either prompt (a paste may `detach` midway)."""
    def prompt(history: Path, pdb: bool) -> PromptSession[str]:
        return PromptSession(
            message=message, bottom_toolbar=toolbar, style=STYLE, completer=completer, complete_while_typing=False,
            validator=None if pdb else validator, validate_while_typing=False,
            history=PromptHistory(history), key_bindings=load_console_bindings(pasted, pdb, job_server))

    console = prompt(history_path(), False)
    wrap_validation_errors(console)
    return console, prompt(history_path(PDB_HISTORY_SUFFIX), True)


def wrap_validation_errors(session: PromptSession[str]) -> None:
    """Let the row under `session`'s line that shows why the line was refused wrap and grow.
    prompt_toolkit gives it one row, which cut an error longer than the terminal was wide:
    `break all 9Z9` on 80 columns lost two thirds of what it said."""
    for container in walk(session.layout.container):
        if (isinstance(container, ConditionalContainer) and container.filter is has_validation_error
                and isinstance(container.content, Window)):
            container.content = Window(container.content.content, wrap_lines=True)
