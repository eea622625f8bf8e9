"""The console's keyboard: the terminal stays in raw mode while text is drawn above the prompt.

prompt_toolkit draws text above a running prompt (print_formatted_text and `run_in_terminal`:
the console's announcements, other clients' lines and output, `meshdbg run`'s logs) with the
terminal back in cooked mode meanwhile, for a function there that would read a line. The
console runs none: it only writes there. A key typed in that window (a few milliseconds, or as
long as a slow terminal takes the output) went to the terminal's line discipline, not to the
prompt: Ctrl-D became the end of an empty line, read once raw mode was back as a NUL, Ctrl-@,
which does nothing visible (the console looked hung: Ctrl-D at another console's `interact`,
its banner still being drawn, never ended it); Ctrl-C became a SIGINT that no command took;
other keys were echoed into the output. In raw mode the key waits in the terminal, unchanged,
and the prompt reads it once the text is drawn.
"""

from __future__ import annotations

import contextlib
import sys
from contextlib import AbstractContextManager

from prompt_toolkit.input import Input
from prompt_toolkit.input.vt100 import Vt100Input


class PromptKeysInput(Vt100Input):
    """stdin, whose keys all go to the prompt: `cooked_mode` (`run_in_terminal`'s) keeps it raw."""

    def cooked_mode(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


def terminal_input() -> Input:
    """The console's input on the terminal (its stdin)."""
    return PromptKeysInput(sys.stdin)
