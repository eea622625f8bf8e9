"""AbovePrompt's hold: the ranks' lines wait while the console says what it did, then come in
order, and never wait past the hold's limits (pure logic: a recording terminal, no prompt up)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Iterator

from prompt_toolkit.application import create_app_session
from prompt_toolkit.output import DummyOutput

from meshdbg.debugger.console import above
from meshdbg.debugger.console.above import AbovePrompt


class Terminal(DummyOutput):
    def __init__(self) -> None:
        super().__init__()
        self.text = ""

    def write_raw(self, data: str) -> None:
        self.text += data


@contextlib.contextmanager
def above_a_terminal() -> Iterator[tuple[AbovePrompt, Terminal]]:
    """An AbovePrompt of the running loop over a recording terminal (no prompt up)."""
    terminal = Terminal()
    with create_app_session(output=terminal):
        yield AbovePrompt(), terminal


async def _until(condition, timeout_s: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "not within the timeout"
        await asyncio.sleep(0.005)


def test_lines_held_come_after_what_is_said_inside_the_hold_in_order() -> None:
    async def body() -> str:
        with above_a_terminal() as (stream, terminal):
            with stream.hold.held():
                stream.write("[r0] first\n")
                writer = threading.Thread(target=stream.write, args=("[r1] from a thread\n",))
                writer.start()
                writer.join()
                await asyncio.sleep(0)  # the loop takes the line the thread handed it (queued before this task's turn)
                stream.write("[r0] second\n")
                terminal.write_raw("resumed 2 sessions\n")  # what the console says inside the hold
            return terminal.text

    assert asyncio.run(body()) == "resumed 2 sessions\n[r0] first\n[r1] from a thread\n[r0] second\n"


def test_a_hold_lets_the_lines_go_after_its_time_limit_and_past_its_size_limit(monkeypatch) -> None:
    monkeypatch.setattr(above, "HOLD_LIMIT_S", 0.05)
    monkeypatch.setattr(above, "HOLD_LIMIT_CHARS", 100)

    async def body() -> None:
        with above_a_terminal() as (stream, terminal):
            with stream.hold.held():  # a long command: the other ranks' lines flow again after the limit
                stream.write("[r1] tick\n")
                assert terminal.text == ""
                await _until(lambda: terminal.text == "[r1] tick\n")
                stream.write("[r1] tock\n")  # after the limit: at once
                assert terminal.text == "[r1] tick\n[r1] tock\n"
            with stream.hold.held():
                stream.write("x" * 60 + "\n")
                assert terminal.text.count("x") == 0
                stream.write("y" * 60 + "\n")  # past HOLD_LIMIT_CHARS: let go at once
                assert terminal.text.endswith("x" * 60 + "\n" + "y" * 60 + "\n")

    asyncio.run(body())


def test_a_hold_inside_another_leaves_the_lines_to_the_outer_one() -> None:
    async def body() -> None:
        with above_a_terminal() as (stream, terminal):
            with stream.hold.held():
                with stream.hold.held():
                    stream.write("[r0] line\n")
                assert terminal.text == ""
            assert terminal.text == "[r0] line\n"

    asyncio.run(body())
