"""pdb's output as the console draws it: as it comes, and cut short by Ctrl-C.

A command's output is drawn as it arrives, as local pdb's terminal shows it: `n` over a loop
that prints, `!train_step()` that logs, each line as it comes, not all at the command's end.
Complete lines are drawn (highlighted as pdb's, meshdbg.debugger.console.highlight), the text
after the last newline when more comes or the command ends, DRAW_CHARS at a time with the
event loop let through between pieces: a Ctrl-C that comes while a piece is drawn cuts the
drawing (`--KeyboardInterrupt--`, and the rest of the output is counted, not drawn), never the
rank; one that comes while the drawing waits for more reaches the command, as in local pdb,
and so does one that cuts the drawing of a command still running (a flood of output ends).
"""

from __future__ import annotations

import asyncio
from typing import Callable

from prompt_toolkit.formatted_text import StyleAndTextTuples

from meshdbg.debugger.console.highlight import fragment_chunks, pdb_fragments

DRAW_CHARS = 16 * 1024  # pdb output is drawn this much at a time, so Ctrl-C can cut a long one short

Printer = Callable[[StyleAndTextTuples, str], None]  # (fragments, end): print them


class OutputDrawing:
    """One pdb output, drawn through `printer` as it is `add`ed (one task draws, so pieces keep
    their order); `finish` adds the last of it and returns once all is drawn, or the drawing
    was `cut` (then it warns through `warn` how much was not shown)."""

    def __init__(self, printer: Printer, warn: Callable[[str], None], color: bool) -> None:
        self._print, self._warn, self._color = printer, warn, color
        self._held: list[str] = []  # added, not drawn yet
        self._received = self._drawn = 0
        self._more = asyncio.Event()
        self.ended = False  # `finish` added the last text (the command is over): the partial line is drawn too
        self._cut = False
        self._drawer: asyncio.Task[None] | None = None
        self.drawing = False  # a piece is being drawn: Ctrl-C now is the drawing's

    def add(self, text: str) -> None:
        """More output (AttachedSession.send's `on_output`): drawn by a task of its own, so
        the reply's reader is never held up by the terminal."""
        self._hold(text)
        if self._held:
            self._more.set()
            if self._drawer is None:
                self._drawer = asyncio.ensure_future(self._draw_as_it_comes())

    def cut(self) -> None:
        """Ctrl-C while drawing: nothing more of this output is drawn."""
        self._cut = True

    def cancel(self) -> None:
        """The command was given up: stop drawing its output."""
        self._cut = True
        if self._drawer is not None:
            self._drawer.cancel()

    async def finish(self, tail: str) -> None:
        """`tail` (a reply's own output), then everything still held, drawn; the cut told.
        With nothing added before (most commands), drawn in the caller's task."""
        self._hold(tail)
        self.ended = True
        if self._drawer is None:
            await self._draw_held(ended=True)
        else:
            self._more.set()
            await self._drawer
        if self._cut:  # (a Ctrl-C during the last piece cut nothing: no count then)
            hidden = self._received - self._drawn
            self._warn("\n--KeyboardInterrupt--" + (f" (output cut: {hidden:,} of {self._received:,} characters "
                                                     f"not shown)" if hidden else ""))

    def _hold(self, text: str) -> None:
        self._received += len(text)
        if text and not self._cut:
            self._held.append(text)

    async def _draw_as_it_comes(self) -> None:
        while not self._cut:
            await self._more.wait()
            self._more.clear()
            ended = self.ended  # (`finish` may come while this draws: it sets `_more` again)
            await self._draw_held(ended)
            if ended:
                return

    async def _draw_held(self, ended: bool) -> None:
        """What is held: its complete lines, or all of it once the output `ended`."""
        text = "".join(self._held)
        cut = len(text) if ended else text.rfind("\n") + 1
        self._held = [text[cut:]] if cut < len(text) else []
        if cut:
            await self._draw(text[:cut], last=ended)

    async def _draw(self, text: str, last: bool) -> None:
        """TEXT drawn a piece at a time: complete lines exactly, blank lines kept; the last of
        an output with one newline at its end (none when it is only whitespace), as pdb's
        replies have always been drawn."""
        if last and not text.strip():
            self._drawn += len(text)
            return
        end = "\n" if last else "\n" * (len(text) - len(text.rstrip("\n")))
        pieces = list(fragment_chunks(pdb_fragments(text, self._color), DRAW_CHARS)) or [(0, [])]
        base = self._drawn
        self.drawing = True
        try:
            for index, (before, piece) in enumerate(pieces):
                if self._cut:
                    return
                self._print(piece, end if index == len(pieces) - 1 else "")
                self._drawn = base + before + sum(len(fragment[1]) for fragment in piece)
                await asyncio.sleep(0)  # a Ctrl-C's handler runs here
            self._drawn = base + len(text)
        finally:
            self.drawing = False
