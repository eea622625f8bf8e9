"""Key bindings of the console prompt, built by a `load_*_bindings()` factory as in ptpython."""

from __future__ import annotations

import sys
from collections import deque

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.search import accept_search_and_accept_input
from prompt_toolkit.keys import Keys
from prompt_toolkit.search import stop_search

from meshdbg.debugger.console.terminal import suspend_to_background
from meshdbg.wire.environment import RECONNECT_S


class PastedLines:
    """What a paste of several lines has left to type once its first line is entered: its
    other complete lines, each to be entered at its own prompt as if typed there, then the
    text after its last newline, left typed at the prompt after them. A terminal running
    local pdb reads a paste so, a line at a time; the console took the paste as one line of
    several (pdb refused it: `*** SyntaxError`)."""

    def __init__(self) -> None:
        self._lines: deque[str] = deque()
        self._rest = ""

    def split(self, text: str) -> str:
        """Keep what `text` (a paste holding a newline) leaves for later; its first line."""
        first, *lines = text.split("\n")
        self._rest = lines.pop()
        self._lines.extend(lines)
        return first

    def next(self) -> tuple[str, bool]:
        """What the next prompt starts with, and whether it is entered at once (a complete line)."""
        if self._lines:
            return self._lines.popleft(), True
        rest, self._rest = self._rest, ""
        return rest, False

    def clear(self) -> None:
        """Ctrl-C: the rest of the paste is not typed."""
        self._lines.clear()
        self._rest = ""


def load_console_bindings(pasted: PastedLines, pdb: bool = False, job_server: bool = False) -> KeyBindings:
    """Ctrl-Z suspends the console, as any terminal program (`fg` brings it back); not in the
    process that serves a `meshdbg run` job (`job_server`), where it says why instead (prompt_toolkit
    typed a literal ^Z into the line, which pdb then refused).

    Ctrl-C at `meshdbg>` clears a typed line; on an empty line it goes to the console. At
    the pdb prompt (`pdb`) it always goes to the console, the typed line left on the screen as
    local pdb leaves it before its `--KeyboardInterrupt--`. Enter in a Ctrl-R search runs the
    line found, as in bash and readline (prompt_toolkit would only end the search); Ctrl-C there
    ends the search first, as readline's.

    The console then decides what an interrupt means where you are: pdb's `--KeyboardInterrupt--`
    (the session stays), stop a rank you let run, or (under `meshdbg run`) explain how to end
    the job; the rest of a paste is not typed then.

    A paste of several lines is typed as a terminal types it for local pdb: its first line
    entered now, its other lines kept in `pasted` for the prompts after (`read_line`).
    """
    bindings = KeyBindings()

    @bindings.add(Keys.BracketedPaste, filter=~is_searching)
    def _paste(event: KeyPressEvent) -> None:
        text = event.data.replace("\r\n", "\n").replace("\r", "\n")  # (as prompt_toolkit's own paste)
        buffer = event.current_buffer
        if "\n" not in text:
            buffer.insert_text(text)
            return
        buffer.insert_text(pasted.split(text))
        buffer.validate_and_handle()

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        pasted.clear()
        searching = leave_search(event.app)
        buffer = event.current_buffer
        if (buffer.text or searching) and not pdb:
            _clear_line(buffer)
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    @bindings.add("c-z")
    def _suspend(event: KeyPressEvent) -> None:
        if job_server:
            run_in_terminal(lambda: print(JOB_SUSPEND_TEXT))
        else:
            suspend_to_background(event.app)

    bindings.add("enter", filter=is_searching)(accept_search_and_accept_input)
    return bindings


JOB_SUSPEND_TEXT = (f"Ctrl-Z does not suspend `meshdbg run`: it serves the job, whose paused ranks run on without it "
                    f"after {RECONNECT_S.name} ({RECONNECT_S.shown_default} s by default). Use another terminal "
                    "(`meshdbg attach`).")


def leave_search(app: Application[str]) -> bool:
    """End a Ctrl-R search still open in `app`; whether one was. A prompt that ended during one
    started the next with every key going to the search field, where Enter ran nothing: the
    console looked frozen."""
    if not app.layout.is_searching:
        return False
    stop_search()
    return True


def _clear_line(buffer: Buffer) -> None:
    """Ctrl-C's fresh line, as readline's: the newest line, emptied; a recalled line stays as it
    was in the history. `Buffer.reset` would also drop the loaded history and reload it in a
    task, so an Up or Ctrl-R typed right after the Ctrl-C would find none."""
    buffer.history_forward(count=sys.maxsize)
    buffer.document = Document()
