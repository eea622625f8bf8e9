"""OutputDrawing, the console's drawing of pdb output as it comes (pure logic: a list for a terminal)."""

from __future__ import annotations

import asyncio

from meshdbg.debugger.console.drawing import DRAW_CHARS, OutputDrawing


class Screen:
    def __init__(self) -> None:
        self.text = ""
        self.warnings: list[str] = []

    def print(self, fragments, end: str) -> None:
        self.text += "".join(fragment[1] for fragment in fragments) + end

    def drawing(self) -> OutputDrawing:
        return OutputDrawing(self.print, self.warnings.append, color=False)


async def settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_complete_lines_are_drawn_as_they_come_and_the_rest_with_the_reply() -> None:
    async def body() -> list[str]:
        screen = Screen()
        drawing = screen.drawing()
        seen = []
        for chunk in ("line 0\n", "\n", "line 1\nhalf", " a line\n", "tail"):
            drawing.add(chunk)
            await settled()
            seen.append(screen.text)
        await drawing.finish("!\n")
        seen.append(screen.text)
        assert screen.warnings == []
        return seen

    assert asyncio.run(body()) == ["line 0\n", "line 0\n\n", "line 0\n\nline 1\n", "line 0\n\nline 1\nhalf a line\n",
                                   "line 0\n\nline 1\nhalf a line\n", "line 0\n\nline 1\nhalf a line\ntail!\n"]


def test_a_reply_alone_is_drawn_as_before_with_one_newline_and_whitespace_not_at_all() -> None:
    async def body(tail: str) -> str:
        screen = Screen()
        await screen.drawing().finish(tail)
        return screen.text

    assert [asyncio.run(body(tail)) for tail in ("42\n", "42", "a\n\n\n", "\n", "")] == ["42\n", "42\n", "a\n", "", ""]


def test_the_end_that_comes_while_a_piece_is_drawn_is_drawn_too() -> None:
    async def body() -> str:
        screen = Screen()
        drawing = screen.drawing()
        drawing.add("x" * (3 * DRAW_CHARS) + "\n")
        await asyncio.sleep(0)  # the drawer has begun: more pieces to go
        assert drawing.drawing
        await drawing.finish("end\n")
        return screen.text

    assert asyncio.run(body()) == "x" * (3 * DRAW_CHARS) + "\nend\n"


def test_a_cut_stops_the_drawing_and_counts_what_was_not_shown() -> None:
    async def body() -> tuple[str, list[str]]:
        screen = Screen()
        drawing = screen.drawing()
        drawing.add("y" * (4 * DRAW_CHARS) + "\n")
        await asyncio.sleep(0)
        await asyncio.sleep(0)  # two pieces drawn
        drawing.cut()
        drawing.add("more\n")  # arriving after the cut: counted, never drawn
        await drawing.finish("tail\n")
        return screen.text, screen.warnings

    text, warnings = asyncio.run(body())
    total = 4 * DRAW_CHARS + 1 + len("more\n") + len("tail\n")
    assert text == "y" * (2 * DRAW_CHARS)
    assert warnings == [f"\n--KeyboardInterrupt-- (output cut: {total - 2 * DRAW_CHARS:,} of {total:,} characters "
                        f"not shown)"]


def test_a_cut_during_the_last_piece_hides_nothing_and_says_only_keyboardinterrupt() -> None:
    """Ctrl-C just as an attach's position was drawn: `(output cut: 0 of 86 characters not
    shown)` said something was lost where nothing was."""
    async def body() -> tuple[str, list[str]]:
        screen = Screen()
        drawing = screen.drawing()
        drawing.add("> train.py(4)<module>()\n-> step()\n")
        await asyncio.sleep(0)  # the one piece drawn, the drawer not yet back
        assert drawing.drawing
        drawing.cut()
        await drawing.finish("")
        return screen.text, screen.warnings

    assert asyncio.run(body()) == ("> train.py(4)<module>()\n-> step()\n", ["\n--KeyboardInterrupt--"])
