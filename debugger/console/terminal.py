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
import os
import signal
import sys
from contextlib import AbstractContextManager
from typing import Any

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.input import Input
from prompt_toolkit.input.vt100 import Vt100Input, cooked_mode


class PromptKeysInput(Vt100Input):
    """stdin, whose keys all go to the prompt: `cooked_mode` (`run_in_terminal`'s) keeps it raw."""

    def cooked_mode(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


def terminal_input() -> Input:
    """The console's input on the terminal (its stdin)."""
    return PromptKeysInput(sys.stdin)


def suspend_to_background(app: Application[Any]) -> None:
    """Ctrl-Z: stop the console's process group, as prompt_toolkit's `suspend_to_background`,
    with the terminal in cooked mode while it is stopped and raw again once `fg` continues it.
    prompt_toolkit's own relies on `run_in_terminal`'s cooked mode, which PromptKeysInput keeps
    raw: the prompt ran on in the shell's cooked mode after `fg`, where the terminal echoed
    every key and the reply to the prompt's cursor-position request (`^[[5;1R`), and Ctrl-C
    was the line discipline's SIGINT."""
    def stop() -> None:
        with cooked_mode(app.input.fileno()):  # (raw again on leaving: what it was on entering)
            os.kill(0, signal.SIGTSTP)

    run_in_terminal(stop)
