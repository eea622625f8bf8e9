"""meshdbg.worker.headroom: the recursion limit raised while meshdbg opens a session, and put
back (pure logic; tests/parity/test_deep_stop.py has the stop it makes work)."""

from __future__ import annotations

import sys
import threading
from typing import Iterator

import pytest

from meshdbg.worker.headroom import EXTRA_FRAMES, Headroom


@pytest.fixture(autouse=True)
def limit() -> Iterator[int]:
    before = sys.getrecursionlimit()
    yield before
    sys.setrecursionlimit(before)


def test_the_limit_is_raised_inside_and_put_back_after(limit: int) -> None:
    with Headroom():
        assert sys.getrecursionlimit() == limit + EXTRA_FRAMES
        with Headroom():  # (re-entrant: one raise)
            assert sys.getrecursionlimit() == limit + EXTRA_FRAMES
        assert sys.getrecursionlimit() == limit + EXTRA_FRAMES
    assert sys.getrecursionlimit() == limit


def test_threads_inside_at_once_share_one_raise_put_back_by_the_last_out(limit: int) -> None:
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with Headroom():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    assert inside.wait(10)
    with Headroom():
        assert sys.getrecursionlimit() == limit + EXTRA_FRAMES
    assert sys.getrecursionlimit() == limit + EXTRA_FRAMES  # the other thread is still inside
    leave.set()
    thread.join(10)
    assert sys.getrecursionlimit() == limit


def test_a_limit_the_program_set_meanwhile_is_left_as_it_set_it(limit: int) -> None:
    with Headroom():
        sys.setrecursionlimit(limit + 7)
    assert sys.getrecursionlimit() == limit + 7
    with Headroom():  # and the next raise starts from it
        assert sys.getrecursionlimit() == limit + 7 + EXTRA_FRAMES
    assert sys.getrecursionlimit() == limit + 7


def test_a_thread_deeper_than_the_old_limit_leaves_it_to_the_next_to_put_back(limit: int) -> None:
    base = 200 + len(_stack())
    sys.setrecursionlimit(base)

    def deeper_than(depth: int) -> None:  # ends its block past the old limit: the limit cannot go back there
        if len(_stack()) <= depth:
            deeper_than(depth)
            return
        headroom.__exit__(None, None, None)

    headroom = Headroom()
    headroom.__enter__()
    deeper_than(base + 10)
    assert sys.getrecursionlimit() == base + EXTRA_FRAMES  # (no RecursionError raised into the caller)
    with Headroom():  # the next one, at a depth the old limit allows, puts it back
        assert sys.getrecursionlimit() == base + EXTRA_FRAMES
    assert sys.getrecursionlimit() == base


def _stack() -> list[object]:
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return frames
