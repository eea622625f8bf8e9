"""The marks around output a session already showed, split out of a byte stream however it is read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from meshdbg.wire.shown_marks import MarkedSplitter, mark


def _split_all(stream: bytes, cuts: list[int]) -> list[tuple[bool, bytes]]:
    splitter, pieces, start = MarkedSplitter(), [], 0
    for cut in sorted(cuts) + [len(stream)]:
        pieces += splitter.split(stream[start:cut])
        start = max(start, cut)
    rest = splitter.rest()
    return _merged(pieces + ([(False, rest)] if rest else []))


def _merged(pieces: list[tuple[bool, bytes]]) -> list[tuple[bool, bytes]]:
    merged: list[tuple[bool, bytes]] = []
    for shown, data in pieces:
        if merged and merged[-1][0] == shown:
            merged[-1] = (shown, merged[-1][1] + data)
        elif data:
            merged.append((shown, data))
    return merged


@given(st.lists(st.tuples(st.booleans(), st.binary(min_size=1, max_size=20)), max_size=8),
       st.lists(st.integers(min_value=0, max_value=400), max_size=10))
def test_marked_pieces_come_back_as_written_whatever_the_reads(pieces: list[tuple[bool, bytes]], cuts: list[int]) -> None:
    pieces = [(shown, data.replace(b"\x1b", b"E")) for shown, data in pieces]  # (no program writes the marks)
    stream = b"".join(mark(data) if shown else data for shown, data in pieces)
    assert _split_all(stream, cuts) == _merged(pieces)


def test_a_lone_start_of_a_mark_at_the_end_is_the_programs_text() -> None:
    splitter = MarkedSplitter()
    assert splitter.split(b"abc\x1b]74") == [(False, b"abc")]
    assert splitter.rest() == b"\x1b]74"
