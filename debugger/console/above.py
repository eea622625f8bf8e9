"""Other writers' output above the prompt: `sys.stdout`/`sys.stderr` while a `meshdbg run` console is open.

Under `meshdbg run` the launcher writes each rank's lines to `sys.stdout` (meshdbg.host.output
looks the stream up at every write). Written straight to the terminal, they would land inside the
line being typed. `AbovePrompt` sends each complete line through prompt_toolkit's
`run_in_terminal` while a prompt is up (the prompt is erased, the lines written, the prompt and
what was typed drawn again), and straight to the terminal otherwise. Unlike prompt_toolkit's
`patch_stdout` it writes on the event loop's thread, not a flusher thread of its own, so it never
races the console's own output on the same terminal.

`Hold` keeps what would be drawn (the ranks' lines, the console's news of other ranks) while the
console says what it just did, so that "resumed 3 sessions" comes before what the ranks it let
run print or do, in the order it all came.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
from typing import Callable, Iterator, TextIO, cast

from prompt_toolkit.application import get_app_session, run_in_terminal
from prompt_toolkit.output import Output


HOLD_LIMIT_S = 0.5  # the longest what is held waits (`Hold.held`)
HOLD_LIMIT_CHARS = 1 << 20  # and the most text kept meanwhile


class Hold:
    """What is drawn while the console says what it did waits, then comes in order.

    While `held()`, each `later(draw, chars)` keeps `draw` (one of the ranks' lines, a news
    line of another rank); at the end of the hold each runs in the order it came. A hold lasts
    HOLD_LIMIT_S at most and keeps HOLD_LIMIT_CHARS at most (a `n` over a long loop: the other
    ranks' lines flow again). Inside another hold, the outer one lets them go. On the loop only."""

    def __init__(self) -> None:
        self._holding = False
        self._held: list[Callable[[], None]] = []  # in the order they came
        self._held_chars = 0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """While inside, what comes through `later` waits (what the console says of what it
        just did, `continue all`'s "resumed 3 sessions", a `c`'s "rank 0 continued", comes
        before the output and the stops of the ranks it let run, not after them)."""
        if self._holding:
            yield
            return
        self._holding = True
        limit = asyncio.get_running_loop().call_later(HOLD_LIMIT_S, self._let_go)
        try:
            yield
        finally:
            limit.cancel()
            self._let_go()

    def later(self, draw: Callable[[], None], chars: int = 0) -> None:
        """`draw()` now, or once the hold ends; `chars`: how much text it keeps meanwhile."""
        if not self._holding:
            draw()
            return
        self._held.append(draw)
        self._held_chars += chars
        if self._held_chars > HOLD_LIMIT_CHARS:
            self._let_go()

    def _let_go(self) -> None:
        self._holding = False
        held, self._held, self._held_chars = self._held, [], 0
        for draw in held:
            draw()


class AbovePrompt:
    """A text stream for `sys.stdout`: whole lines, above the running prompt, raw (the ranks'
    colours kept); writes from another thread are handed to the loop. Its lines wait while
    `hold` is held (the console's, so they keep their order with its news)."""

    def __init__(self, hold: Hold | None = None) -> None:
        self._session = get_app_session()
        self._output: Output = self._session.output
        self._context = contextvars.copy_context()  # the console's app session, for run_in_terminal
        self._loop = asyncio.get_running_loop()
        self._partial = ""
        self.hold = hold if hold is not None else Hold()

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
            self._arrived(text)
        else:
            self._loop.call_soon_threadsafe(self._arrived, text)

    def _arrived(self, text: str) -> None:
        """On the loop: `text` shown now, or kept while held."""
        self.hold.later(lambda: self._shown(text), len(text))

    def _shown(self, text: str) -> None:
        self._context.run(self._above_prompt, text)

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
def output_above_prompt(hold: Hold) -> Iterator[AbovePrompt]:
    """`sys.stdout` and `sys.stderr` go through one AbovePrompt (given), whose lines wait
    while `hold` is held, until the block ends."""
    stdout, stderr = sys.stdout, sys.stderr
    stream = AbovePrompt(hold)
    sys.stdout = sys.stderr = cast(TextIO, stream)
    try:
        yield stream
    finally:
        stream.flush()
        sys.stdout, sys.stderr = stdout, stderr
