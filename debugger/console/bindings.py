"""Key bindings of the console prompt, built by a `load_*_bindings()` factory as in ptpython."""

from __future__ import annotations

import sys

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.search import accept_search_and_accept_input


def load_console_bindings(pdb: bool = False) -> KeyBindings:
    """Ctrl-C at `meshdbg>` clears a typed line; on an empty line it goes to the console. At
    the pdb prompt (`pdb`) it always goes to the console, the typed line left on the screen as
    local pdb leaves it before its `--KeyboardInterrupt--`. Enter in a Ctrl-R search runs the
    line found, as in bash and readline (prompt_toolkit would only end the search).

    The console then decides what an interrupt means where you are: pdb's `--KeyboardInterrupt--`
    (the session stays), stop a rank you let run, or (under `meshdbg run`) explain how to end
    the job.
    """
    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text and not pdb:
            _clear_line(buffer)
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    bindings.add("enter", filter=is_searching)(accept_search_and_accept_input)
    return bindings


def _clear_line(buffer: Buffer) -> None:
    """Ctrl-C's fresh line, as readline's: the newest line, emptied; a recalled line stays as it
    was in the history. `Buffer.reset` would also drop the loaded history and reload it in a
    task, so an Up or Ctrl-R typed right after the Ctrl-C would find none."""
    buffer.history_forward(count=sys.maxsize)
    buffer.document = Document()
