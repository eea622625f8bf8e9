"""Each rank's stdout and stderr, line by line, each line prefixed with the rank that wrote it.

    [r3 hosts=0,gpus=3] loss 0.12

A pipe per stream and rank is read on the host agent's event loop; only complete lines are
written (a partial line waits for its newline or for the end of the stream), and each batch
of lines goes out at once (no await between its writes), so lines of different ranks never
interleave. The target stream is looked up at every write, so a console that redirects
sys.stdout gets the logs.
Lines go to a `LineSink` with whether the rank's open session already showed them (marked so
by the worker, meshdbg.wire.shown_marks); `log_sink` is the one place that leaves those out
while a console on the run's terminal shows the rank: for this host's ranks, and for another
host's, whose agent sends the lines with that flag (meshdbg.host.remote).
`PrefixedLines.handed_on` is the barrier a console needs when it leaves a rank: it returns once
what the rank wrote before the call has reached the sink (meshdbg.debugger.mesh.launcher).
A `Flow` (the agent's stream to a remote `run`) pauses every pipe while too much is queued,
so a rank that writes faster than the network carries blocks in its write, as on a terminal.
`RankLines` hands the same lines, without their prefix, to listeners in the run's process
(`run --dap`'s adapter); lines a session already showed are not among them.
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import itertools
import os
import re
import struct
import sys
import termios
from enum import IntEnum
from typing import Callable, Protocol, TextIO, cast

from meshdbg.wire.shown_marks import MarkedSplitter



class Stream(IntEnum):
    """A rank's output stream, by its file descriptor (as HostOutput carries it)."""

    STDOUT = 1
    STDERR = 2


Target = Callable[[], TextIO]
LineSink = Callable[[str, bool], None]  # (prefixed complete lines, whether the rank's session showed them)
SinkFor = Callable[[int, Stream], LineSink]  # (rank, stream) → where its lines go
Listener = Callable[[int, Stream, list[str]], None]  # (rank, stream, lines without prefix or newline)
_PREFIX = re.compile(r"\[r\d+(?: [^\]]*)?\] ")


def line_prefix(label: str) -> str:
    """What starts each of a rank's lines: `[r3 hosts=0,gpus=3] ` for the label `r3 hosts=0,gpus=3`."""
    return f"[{label}] "


class RankLines:
    """The ranks' output lines as they come, to whoever listens in this process (a fan-out:
    nothing is kept, a listener that falls behind bounds its own backlog)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(rank, stream, lines)` for every batch from now on; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def sinks(self, inner: SinkFor) -> SinkFor:
        """`inner`'s sinks, each also handing the lines no session showed to the listeners."""
        def sink_for(rank: int, stream: Stream) -> LineSink:
            log = inner(rank, stream)

            def write(text: str, shown: bool) -> None:
                log(text, shown)
                if not shown and self._listeners:
                    self.publish(rank, stream, [_PREFIX.sub("", line, count=1) for line in text.splitlines()])

            return write

        return sink_for

    def publish(self, rank: int, stream: Stream, lines: list[str]) -> None:
        """To every listener; one that fails is said on stderr and dropped (the output goes on)."""
        for listener in list(self._listeners):
            try:
                listener(rank, stream, lines)
            except Exception as exc:
                self._listeners.remove(listener)
                print(f"meshdbg: stopped giving the ranks' output to {listener!r}: {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)


class Flow(Protocol):
    """Pauses the pipes it watches while its consumer is behind."""

    def watch(self, transport: asyncio.ReadTransport) -> None: ...

    def forget(self, transport: asyncio.ReadTransport) -> None: ...


def stdout() -> TextIO:
    return sys.stdout


def stderr() -> TextIO:
    return sys.stderr


def log_sink(target: Target, shows: Callable[[], bool]) -> LineSink:
    """Lines onto `target()`, except those the rank's session showed while `shows()` (a console
    on the run's terminal shows that rank's session, which printed them already)."""
    def write(text: str, shown: bool) -> None:
        if shown and shows():
            return
        stream = target()
        stream.write(text)
        stream.flush()

    return write


def to_terminal(shows: Callable[[int], bool] = lambda rank: False) -> SinkFor:
    """Each rank's lines onto this process's stdout or stderr (`log_sink`; `shows(rank)`)."""
    return lambda rank, stream: log_sink(stderr if stream is Stream.STDERR else stdout, functools.partial(shows, rank))


class PrefixedLines(asyncio.Protocol):
    """Reads one pipe; hands its complete lines with `prefix` to `sink`."""

    def __init__(self, prefix: str, sink: LineSink, flow: Flow | None = None, fd: int = -1) -> None:
        self.prefix = prefix
        self.sink = sink
        self.flow = flow
        self.fd = fd  # the pipe's read end (for handed_on)
        self._transport: asyncio.ReadTransport | None = None
        self.received = 0  # bytes read so far (how a drain tells output still flows)
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._next_read: asyncio.Future[None] | None = None  # settled by the next read (for handed_on)
        self._partial = b""
        self._partial_shown = True  # every byte of the partial line was shown by a session
        self._marks = MarkedSplitter()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.flow is not None:
            self._transport = cast(asyncio.ReadTransport, transport)  # connect_read_pipe's
            self.flow.watch(self._transport)

    async def handed_on(self) -> None:
        """Return once every byte written into the pipe before this call has been read and its
        complete lines handed to the sink (they are read on the loop's next turns; a pipe its
        Flow paused waits for the flow to resume)."""
        target = self.received + unread_bytes(self.fd) if not self.closed.done() else 0
        while self.received < target and not self.closed.done():
            if self._next_read is None:
                self._next_read = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._next_read)  # one waiter cancelled leaves the others waiting

    def _read_happened(self) -> None:
        if self._next_read is not None:
            self._next_read.set_result(None)
            self._next_read = None

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
        self._read_happened()

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
        self._read_happened()

    def _write(self, lines: list[tuple[bytes, bool]]) -> None:
        """One sink call per run of lines alike in being shown or not."""
        for shown, run in itertools.groupby(lines, key=lambda line: line[1]):
            self.sink("".join(f"{self.prefix}{line.decode(errors='replace').rstrip(chr(13))}\n" for line, _ in run),
                      shown)


async def pipe_to(prefix: str, sink: LineSink, flow: Flow | None = None) -> tuple[int, PrefixedLines]:
    """A new pipe whose read end feeds PrefixedLines; returns (write fd for the child, protocol)."""
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    _, protocol = await loop.connect_read_pipe(lambda: PrefixedLines(prefix, sink, flow, read_fd),
                                               os.fdopen(read_fd, "rb", 0))
    return write_fd, protocol


def unread_bytes(fd: int) -> int:
    """How many bytes pipe `fd` holds that nobody has read yet (0 once it is closed)."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
    except OSError:
        return 0
