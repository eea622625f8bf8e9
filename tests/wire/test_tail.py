"""Tail: the end of a session's output an attach replays, and the part of it added aside (the
program's own output between pdb's commands), which a client that showed it leaves out."""

from __future__ import annotations

from meshdbg.wire.chunks import Tail


def test_text_added_aside_at_the_end_is_left_out_on_request_only() -> None:
    tail = Tail()
    tail.add("> job.py(3)main()\n")
    tail.add("tick 1\n", aside=True)
    tail.add("tick 2\n", aside=True)
    assert tail.text() == "> job.py(3)main()\ntick 1\ntick 2\n"
    assert tail.text(with_aside=False) == "> job.py(3)main()\n"


def test_text_added_aside_before_pdb_s_is_kept() -> None:
    tail = Tail()
    tail.add("tick 1\n", aside=True)
    tail.add("> job.py(3)main()\n")
    assert tail.text(with_aside=False) == "tick 1\n> job.py(3)main()\n"


def test_past_the_limit_the_note_stays_only_with_text_to_show() -> None:
    tail = Tail(limit=10)
    tail.add("abcdefghijklmnopqrstuvwxyz", aside=True)  # all that is kept was added aside
    assert tail.text() == "[meshdbg: 16 earlier characters of output not kept]\nqrstuvwxyz"
    assert tail.text(with_aside=False) == ""
    tail.clear()
    tail.add("> here\n")
    tail.add("tick\n", aside=True)  # 12 characters: the first 2 go
    assert tail.text(with_aside=False) == "[meshdbg: 2 earlier characters of output not kept]\nhere\n"


def test_clear_forgets_what_was_aside() -> None:
    tail = Tail()
    tail.add("tick\n", aside=True)
    tail.clear()
    tail.add("> here\n")
    assert tail.text(with_aside=False) == "> here\n"
