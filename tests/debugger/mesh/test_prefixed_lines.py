"""A rank's log lines: prefixed, whole, and without what the rank's session already showed
while a console on the terminal shows that rank (meshdbg.host.output)."""

from __future__ import annotations

import asyncio
import io

import pytest

from meshdbg.host.output import PrefixedLines, log_sink
from meshdbg.wire.shown_marks import mark


def _log(reads: list[bytes], shows: bool) -> str:
    async def body() -> str:
        screen = io.StringIO()
        lines = PrefixedLines("[r0] ", log_sink(lambda: screen, lambda: shows))
        for data in reads:
            lines.data_received(data)
        lines.eof_received()
        return screen.getvalue()

    return asyncio.run(body())


STREAM = b"before\n" + mark(b"shown whole\nshown ") + mark(b"in two\n") + b"half " + mark(b"shown\n") + b"tail"


@pytest.mark.parametrize("cut", range(0, len(STREAM), 3))
def test_shown_lines_are_left_out_only_while_the_console_shows_the_rank(cut: int) -> None:
    reads = [STREAM[:cut], STREAM[cut:]]
    assert _log(reads, shows=False) == "[r0] before\n[r0] shown whole\n[r0] shown in two\n[r0] half shown\n[r0] tail\n"
    assert _log(reads, shows=True) == "[r0] before\n[r0] half shown\n[r0] tail\n"
