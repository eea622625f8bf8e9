"""Key bindings of the console prompt, built by a `load_*_bindings()` factory as in ptpython."""

from __future__ import annotations

from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent


def load_console_bindings() -> KeyBindings:
    """Ctrl-C clears a typed line; on an empty line it goes to the console.

    The console then decides what an interrupt means where you are: leave the attached rank,
    or stop a rank you let run. Ctrl-C never ends the console (quit or Ctrl-D does).
    """
    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return bindings
