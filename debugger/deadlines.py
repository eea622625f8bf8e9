"""How long a command that waits on ranks waits: every such wait has a deadline.

`cast`, `continue`, `interrupt`, `compare` and `stacks` ask each selected rank something and
wait for its answer; a rank that is connected but never answers (its pdb thread is stuck, a
hung process whose connection still stands) must not hold the command forever. Each request
carries `timeout_s` (0: the verb's default here); a rank not done by then is reported as "no
answer", and whatever it was asked carries on in the background (its output reaches the
session's transcript, replayed on attach).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, TypeVar

T = TypeVar("T")

CAST_S = 30.0  # a pdb command may legitimately run a while (`n` over a slow step)
CONTINUE_S = 10.0
INTERRUPT_S = 2.0  # a worker answers an interrupt from its stream's reader thread, at once
COMPARE_S = 5.0
STACKS_S = 0.6  # each rank's own answer; py-spy from outside gets its own bound after it


CLIENT_STALL_S = 5.0  # a control client that takes no output for this long is cut off


def cut_off_text() -> str:
    """Why a control client's stream was ended by the server: it stopped reading (SIGSTOP, a
    frozen terminal), which must never hold a rank. Said by the server and by the client."""
    return (f"this client took no output for {CLIENT_STALL_S:g} s and was cut off by the server; the sessions "
            f"live on (attach again: the output since the last command is replayed)")


class NoAnswer(Exception):
    """A rank did not answer within the deadline."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(no_answer_text(seconds))


def no_answer_text(seconds: float) -> str:
    return f"no answer within {seconds:g} s"


def deadline(requested: float, default: float) -> float:
    """The wait a request asked for, or the verb's default for 0 (or nonsense)."""
    return requested if 0 < requested < float("inf") else default


async def answer_within(awaitable: Awaitable[T], seconds: float) -> T:
    """`awaitable`'s result, or NoAnswer after `seconds`; it is not cancelled then, but runs
    on (a command under way in a worker cannot be taken back). One future and one timer:
    a cast to thousands of ranks waits on one per rank (not `wait_for` around `shield`)."""
    task = asyncio.ensure_future(awaitable)
    if not task.done():
        loop = asyncio.get_running_loop()
        settled = loop.create_future()

        def settle(_: object = None) -> None:
            if not settled.done():
                settled.set_result(None)

        task.add_done_callback(settle)
        timer = loop.call_later(seconds, settle)
        try:
            await settled
        finally:
            timer.cancel()
            task.remove_done_callback(settle)
            if not task.done():  # no answer yet, or the caller went away: it runs on, unwatched
                task.add_done_callback(forget)
        if not task.done():
            raise NoAnswer(seconds)
    return task.result()


def forget(task: asyncio.Future) -> None:
    """A done callback for a task no one awaits any more: its failure is retrieved, not logged."""
    if not task.cancelled():
        task.exception()  # retrieved: a late failure has no one to tell
