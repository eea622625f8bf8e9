"""A rank's log lines: prefixed, whole, and without what the rank's session already showed
while a console on the terminal shows that rank; the same lines unprefixed to the run's own
listeners, never those a session showed (meshdbg.host.output); and `handed_on`, the barrier
a console that leaves a rank waits on, over a real pipe."""

from __future__ import annotations

import asyncio
import io
import os

import pytest
import uvloop

from meshdbg.host.output import PrefixedLines, RankLines, Stream, line_prefix, log_sink, pipe_to
from meshdbg.wire.shown_marks import mark


def _log(reads: list[bytes], shows: bool, heard: list[str] | None = None) -> str:
    async def body() -> str:
        screen = io.StringIO()
        lines = RankLines()
        if heard is not None:
            lines.listen(lambda rank, stream, text: heard.extend(text))
        sink = lines.sinks(lambda rank, stream: log_sink(lambda: screen, lambda: shows))(0, Stream.STDOUT)
        pump = PrefixedLines(line_prefix("r0"), sink)
        for data in reads:
            pump.data_received(data)
        pump.eof_received()
        return screen.getvalue()

    return asyncio.run(body())


STREAM = b"before\n" + mark(b"shown whole\nshown ") + mark(b"in two\n") + b"half " + mark(b"shown\n") + b"tail"


@pytest.mark.parametrize("cut", range(0, len(STREAM), 3))
def test_shown_lines_are_left_out_only_while_the_console_shows_the_rank(cut: int) -> None:
    reads = [STREAM[:cut], STREAM[cut:]]
    assert _log(reads, shows=False) == "[r0] before\n[r0] shown whole\n[r0] shown in two\n[r0] half shown\n[r0] tail\n"
    assert _log(reads, shows=True) == "[r0] before\n[r0] half shown\n[r0] tail\n"


@pytest.mark.parametrize("cut", range(0, len(STREAM), 3))
def test_listeners_hear_the_lines_no_session_showed(cut: int) -> None:
    heard: list[str] = []
    _log([STREAM[:cut], STREAM[cut:]], shows=False, heard=heard)
    assert heard == ["before", "half shown", "tail"]


def test_a_remote_hosts_lines_are_heard_by_rank_without_their_prefix() -> None:
    """A remote agent's batch (one rank's prefixed lines, with the flag its agent sent) reaches
    listeners unprefixed, a line that only looks like a prefix kept, and shown batches not at all."""
    heard: list[tuple[int, Stream, list[str]]] = []
    logged: list[str] = []
    lines = RankLines()
    stop = lines.listen(lambda rank, stream, text: heard.append((rank, stream, text)))
    sink = lines.sinks(lambda rank, stream: lambda text, shown: logged.append(text))(12, Stream.STDERR)
    prefix = line_prefix("r12 hosts=1,gpus=4")
    sink(f"{prefix}loss [0.5] ok\n{prefix}[r9] is not a prefix here\n", False)
    sink(f"{prefix}shown already\n", True)
    stop()
    sink(f"{prefix}after\n", False)
    assert heard == [(12, Stream.STDERR, ["loss [0.5] ok", "[r9] is not a prefix here"])]
    assert len(logged) == 3  # the log gets every batch; what it shows is log_sink's call


def test_a_listener_that_fails_is_dropped_and_the_others_still_hear(capsys) -> None:
    heard: list[list[str]] = []
    lines = RankLines()
    lines.listen(lambda rank, stream, text: 1 / 0)
    lines.listen(lambda rank, stream, text: heard.append(text))
    lines.publish(0, Stream.STDOUT, ["a"])
    lines.publish(0, Stream.STDOUT, ["b"])
    assert heard == [["a"], ["b"]]
    assert capsys.readouterr().err.count("ZeroDivisionError") == 1


class _Pausable:
    """A Flow that only keeps the pipe it is given, to pause it by hand."""

    def __init__(self) -> None:
        self.pipe: asyncio.ReadTransport | None = None

    def watch(self, transport: asyncio.ReadTransport) -> None:
        self.pipe = transport

    def forget(self, transport: asyncio.ReadTransport) -> None:
        pass


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, uvloop.new_event_loop], ids=["asyncio", "uvloop"])
def test_handed_on_returns_once_what_was_written_before_it_is_in_the_sink(loop_factory) -> None:
    """Lines written into the pipe are in the sink when `handed_on` returns, not before; a
    paused pipe holds it until it resumes; a closed one lets it return at once (on both
    loops: `meshdbg run` runs on uvloop's)."""
    async def body() -> None:
        got: list[str] = []
        flow = _Pausable()
        write_fd, pump = await pipe_to("[r0] ", lambda text, shown: got.append(text), flow)
        try:
            lines = "".join(f"line {n}\n" for n in range(5000))  # about 50 KB: more than one read
            os.write(write_fd, lines.encode())
            assert not got  # nothing is read before the loop turns
            await asyncio.wait_for(pump.handed_on(), 5)
            assert "".join(got) == "".join(f"[r0] line {n}\n" for n in range(5000))

            assert flow.pipe is not None
            flow.pipe.pause_reading()
            os.write(write_fd, b"held\n")
            waiting = asyncio.ensure_future(pump.handed_on())
            done, _ = await asyncio.wait({waiting}, timeout=0.3)
            assert not done and got[-1] != "[r0] held\n"
            flow.pipe.resume_reading()
            await asyncio.wait_for(waiting, 5)
            assert got[-1] == "[r0] held\n"
        finally:
            os.close(write_fd)
        await asyncio.wait_for(pump.closed, 5)
        await asyncio.wait_for(pump.handed_on(), 1)

    with asyncio.Runner(loop_factory=loop_factory) as runner:
        runner.run(body())
