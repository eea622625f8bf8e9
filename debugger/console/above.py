"""Other writers' output above the prompt: `sys.stdout`/`sys.stderr` while a `meshdbg run` console is open.

Under `meshdbg run` the launcher writes each rank's lines to `sys.stdout` (meshdbg.host.output
looks the stream up at every write). Written straight to the terminal, they would land inside the
line being typed. `AbovePrompt` sends each complete line through prompt_toolkit's
`run_in_terminal` while a prompt is up (the prompt is erased, the lines written, the prompt and
what was typed drawn again), and straight to the terminal otherwise. Unlike prompt_toolkit's
`patch_stdout` it writes on the event loop's thread, not a flusher thread of its own, so it never
races the console's own output on the same terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
from typing import Iterator, TextIO, cast

from prompt_toolkit.application import get_app_session, run_in_terminal
from prompt_toolkit.output import Output


class AbovePrompt:
    """A text stream for `sys.stdout`: whole lines, above the running prompt, raw (the ranks'
    colours kept); writes from another thread are handed to the loop."""

    def __init__(self) -> None:
        self._session = get_app_session()
        self._output: Output = self._session.output
        self._context = contextvars.copy_context()  # the console's app session, for run_in_terminal
        self._loop = asyncio.get_running_loop()
        self._partial = ""

    def write(self, text: str) -> int:
        complete, newline, self._partial = (self._partial + text).rpartition("\n")
        if newline:
            self._emit(complete + newline)
        return len(text)

    def flush(self) -> None:
        if self._partial:
            text, self._partial = self._partial, ""
            self._emit(text)

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._output.fileno()

    @property
    def encoding(self) -> str:
        return self._output.encoding()

    def _emit(self, text: str) -> None:
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._context.run(self._above_prompt, text)
        else:
            self._loop.call_soon_threadsafe(self._context.run, self._above_prompt, text)

    def _above_prompt(self, text: str) -> None:
        app = self._session.app
        if app is not None and app.is_running:
            run_in_terminal(lambda: self._write(text), in_executor=False)
        else:
            self._write(text)

    def _write(self, text: str) -> None:
        self._output.write_raw(text)
        self._output.flush()


@contextlib.contextmanager
def output_above_prompt() -> Iterator[None]:
    """`sys.stdout` and `sys.stderr` go through one AbovePrompt until the block ends."""
    stdout, stderr = sys.stdout, sys.stderr
    stream = AbovePrompt()
    sys.stdout = sys.stderr = cast(TextIO, stream)
    try:
        yield
    finally:
        stream.flush()
        sys.stdout, sys.stderr = stdout, stderr
