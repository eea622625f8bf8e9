"""Key bindings of the console prompt, built by a `load_*_bindings()` factory as in ptpython."""

from __future__ import annotations

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
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    bindings.add("enter", filter=is_searching)(accept_search_and_accept_input)
    return bindings
