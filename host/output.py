"""Each rank's stdout and stderr, line by line, each line prefixed with the rank that wrote it.

    [r3 hosts=0,gpus=3] loss 0.12

A pipe per stream and rank is read on the host agent's event loop; only complete lines are
written (a partial line waits for its newline or for the end of the stream), and each batch
of lines goes out in one write, so lines of different ranks never interleave. The target
stream is looked up at every write, so a console that redirects sys.stdout gets the logs.
A line the rank's open session already showed (marked so by the worker, meshdbg.wire.shown_marks)
is left out while `shows()` says that a console on the run's terminal is attached to the rank.
A `Flow` (the agent's stream to a remote `run`) pauses every pipe while too much is queued,
so a rank that writes faster than the network carries blocks in its write, as on a terminal.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Callable, Protocol, TextIO, cast

from meshdbg.wire.shown_marks import MarkedSplitter


class TextSink(Protocol):
    """What output goes to: sys.stdout, or a stream up the wire (meshdbg.host.remote)."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


Target = Callable[[], TextSink]


class Flow(Protocol):
    """Pauses the pipes it watches while its consumer is behind."""

    def watch(self, transport: asyncio.ReadTransport) -> None: ...

    def forget(self, transport: asyncio.ReadTransport) -> None: ...


def stdout() -> TextIO:
    return sys.stdout


def stderr() -> TextIO:
    return sys.stderr


class PrefixedLines(asyncio.Protocol):
    """Reads one pipe; writes its complete lines with `prefix` to `target()`."""

    def __init__(self, prefix: str, target: Target, flow: Flow | None = None,
                 shows: Callable[[], bool] = lambda: False) -> None:
        self.prefix = prefix
        self.target = target
        self.flow = flow
        self.shows = shows
        self._transport: asyncio.ReadTransport | None = None
        self.received = 0  # bytes read so far (how a drain tells output still flows)
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._partial = b""
        self._partial_shown = True  # every byte of the partial line was shown by a session
        self._marks = MarkedSplitter()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.flow is not None:
            self._transport = cast(asyncio.ReadTransport, transport)  # connect_read_pipe's
            self.flow.watch(self._transport)

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        lines: list[tuple[bytes, bool]] = []
        for shown, piece in self._marks.split(data):
            *complete, rest = piece.split(b"\n")
            for part in complete:
                lines.append((self._partial + part, self._partial_shown and shown))
                self._partial, self._partial_shown = b"", True
            self._partial += rest
            self._partial_shown = self._partial_shown and (shown or not rest)
        self._write(lines)

    def eof_received(self) -> bool:
        self._partial += self._marks.rest()
        if self._partial:
            self._write([(self._partial, False)])
            self._partial = b""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self.flow is not None and self._transport is not None:
            self.flow.forget(self._transport)
        if not self.closed.done():
            self.closed.set_result(None)

    def _write(self, lines: list[tuple[bytes, bool]]) -> None:
        if not lines:
            return
        hidden = self.shows()
        text = "".join(f"{self.prefix}{line.decode(errors='replace').rstrip(chr(13))}\n"
                       for line, shown in lines if not (shown and hidden))
        if not text:
            return
        stream = self.target()
        stream.write(text)
        stream.flush()


async def pipe_to(prefix: str, target: Target, flow: Flow | None = None,
                  shows: Callable[[], bool] = lambda: False) -> tuple[int, PrefixedLines]:
    """A new pipe whose read end feeds PrefixedLines; returns (write fd for the child, protocol)."""
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    _, protocol = await loop.connect_read_pipe(lambda: PrefixedLines(prefix, target, flow, shows),
                                               os.fdopen(read_fd, "rb", 0))
    return write_fd, protocol
