"""The program's own output while a session is open: file descriptors 1 and 2, teed.

A person at local pdb sees the program's prints between pdb's lines, C extensions' writes
included, because both share one terminal. A remote session gets the same: while at least one
session of the process is open, a pipe is dup2'ed over fd 1 and fd 2, and a reader thread
writes every byte on to where it went before (a terminal, a launcher's pipe, a log file) and
hands the text to each open session's output (`Sink.program_wrote`), in the order it came.

Order with pdb's own text: pdb writes into a buffer (meshdbg.worker.output), which calls
`sync()` first: the program's Python-level and C stdio buffers are flushed, then whatever
is in the pipes is drained into the sinks, so text the program wrote before pdb's reaches
the session before it, as on a terminal. While a session is open sys.stdout is
line-buffered, as it is on a terminal.

Never a deadlock: nothing flushes the program's streams while holding the lock the reader
needs, the reader never waits for pdb's thread, and a full wire only slows the reader (which
slows the writer, as a slow terminal does). When the last session ends the descriptors are
restored at once; the pipes and their reader are kept for the process's next session, the
reader teeing what still comes (a forked child may hold the pipes) into the old destination only.
Under `meshdbg run` what goes on to the launcher's pipes is marked as shown
(meshdbg.wire.shown_marks), so a console attached to this rank does not print it a second
time as a log line.
"""

from __future__ import annotations

import atexit
import codecs
import ctypes
import os
import queue
import select
import stat
import sys
import threading
from typing import Callable, Protocol, cast

from meshdbg.wire.environment import SHOWN_MARKS
from meshdbg.wire.shown_marks import mark
from meshdbg.worker.notices import say, setting
from meshdbg.worker.process_id import this_pid
from meshdbg.worker.stdio_numbers import dup_above_standard, pipe_above_standard, printed_to

STREAMS = (1, 2)
READ_BYTES = 64 * 1024
_POLL_MS = 200  # how often the reader looks for sinks whose session ended without saying so, and for held lines
READER_NAME = "meshdbg-output"  # a thread reading a capture's pipes
IDLE_NAME = "meshdbg-output-idle"  # one between sessions, kept for the process's next capture



class _Reconfigurable(Protocol):
    """A text stream whose buffering can change (io.TextIOWrapper, and what looks like one)."""

    line_buffering: bool
    write_through: bool

    def reconfigure(self, *, line_buffering: bool, write_through: bool) -> None: ...

class Sink(Protocol):
    """Where the program's output goes besides its old destination: an open session's output."""

    @property
    def open(self) -> bool:
        """False once the session is over (the capture lets the sink go)."""

    def program_wrote(self, text: str) -> None:
        """Take the program's text, in order with what pdb wrote before it."""

    def send_held_lines(self) -> None:
        """Send the complete lines a running command has held long enough (the reader's look)."""


def _c_fflush() -> Callable[[ctypes.c_void_p | None], int] | None:
    """C stdio's fflush, or None where there is no C library to ask."""
    try:
        return ctypes.CDLL(None).fflush
    except (OSError, AttributeError):
        return None


_fflush = _c_fflush()


def _flush_program_buffers() -> None:
    """Push what the program has written but not yet handed to fd 1/2: Python's streams
    and C stdio's (a C extension's printf on a pipe). Never called holding the capture's lock."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # a replaced or closed stream: nothing of ours to flush there
            pass
    if _fflush is not None:
        _fflush(None)


def _write_all(fd: int, data: bytes) -> bool:
    """Write all of `data` to `fd`; False when the destination is gone."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except InterruptedError:
            continue
        except OSError:  # EPIPE, EBADF: the old destination went away; the session still gets it
            return False
    return True


class NotPrintedTo(OSError):
    """fd 1 or 2 is closed, or is the program's own descriptor that took a number it closed
    (meshdbg.worker.stdio_numbers.printed_to): nothing to capture there at this stop."""


class _Epoch:
    """The capture's pipes, the saved descriptors and the reader thread. Made at a process's
    first session and kept between its sessions: `capture` puts the pipes over fd 1 and 2,
    `restore` gives them back, and the pipes stay open and read in between (no pipe to make,
    no reader to wake or end at each stop: a continue to 32 ranks ends 32 captures at once)."""

    def __init__(self, owner: "FdCapture") -> None:
        self._owner = owner
        self.saved: dict[int, int] = {}  # where each stream went before the capture under way
        self.reads: dict[int, int] = {}  # pipe read end → the stream it captures
        self._writes: dict[int, int] = {}  # stream → its pipe's write end, kept open by us
        self._decoders = {fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in STREAMS}
        self._alive: dict[int, bool]  # still able to tee to the old destination (set by `capture`)
        self._marked: dict[int, bool]  # the launcher's pipes: what is teed there is marked shown (`capture`)
        self._wake_read, self._wake_write = pipe_above_standard()
        self._pending = select.poll()  # whether the pipes hold anything, asked in one call (`holds_data`)
        self.restored = True
        self.over = False  # the reader ended (its pipes closed under it): not to be captured with again
        self._thread: threading.Thread | None = None
        try:
            for fd in STREAMS:
                read, write = pipe_above_standard()
                self.reads[read], self._writes[fd] = fd, write
                os.set_blocking(read, False)
                self._pending.register(read, select.POLLIN)
            self.capture()
        except OSError:
            self._close(self._wake_read, self._wake_write, *self.reads, *self._writes.values())
            raise
        _readers.run(self._run)

    def usable(self) -> bool:
        """The reader runs and each kept write end is still its pipe's (a program that closed
        every descriptor, as a daemon does, may have reused their numbers)."""
        try:
            return not self.over and len(self.reads) == len(STREAMS) and all(
                os.fstat(self._writes[fd]).st_ino == os.fstat(read).st_ino for read, fd in self.reads.items())
        except OSError:
            return False

    def capture(self) -> None:
        """The pipes over fd 1 and 2, from where those go now (the program may have moved
        them since the last capture). Called with the owner's lock held (the reader tees to
        `saved`)."""
        saved: dict[int, int] = {}
        if not all(printed_to(fd) for fd in STREAMS):
            raise NotPrintedTo("fd 1 or 2 is closed or is the program's own descriptor")
        try:
            for fd in STREAMS:
                saved[fd] = dup_above_standard(fd)
        except OSError:  # a stream closed: nothing to capture it into
            self._close(*saved.values())
            raise
        old, self.saved = self.saved, saved
        self._close(*old.values())
        marks = setting(SHOWN_MARKS)  # the launcher's pipes (not a file a child was sent to)
        self._marked = {fd: marks and stat.S_ISFIFO(os.fstat(saved).st_mode) for fd, saved in saved.items()}
        self._alive = dict.fromkeys(STREAMS, True)
        for fd in STREAMS:
            os.dup2(self._writes[fd], fd)
        self.restored = False
        self._name(READER_NAME)
        _write_all(self._wake_write, b"x")  # the reader watches for ended sessions again

    def restore(self) -> None:
        """Give fd 1 and 2 back their old destinations (the reader tees what is left there)."""
        if self.restored:
            return
        self.restored = True
        for fd, saved in self.saved.items():
            os.dup2(saved, fd)
        self._name(IDLE_NAME)

    def _name(self, name: str) -> None:
        if self._thread is not None:
            self._thread.name = name

    @staticmethod
    def _close(*fds: int) -> None:
        for fd in fds:
            os.close(fd)

    def holds_data(self) -> bool:
        """Something waits in a pipe (or one reached end of file): one system call, so that
        pdb's every write costs no more while the program prints nothing."""
        return bool(self._pending.poll(0))

    def drain(self, sinks: list[Sink]) -> bool:
        """Read what the pipes hold now, tee it, hand it to `sinks`; False once every pipe
        reached end of file (no writer is left). Called with the owner's lock held."""
        open_any = False
        for read, fd in list(self.reads.items()):
            while True:
                try:
                    data = os.read(read, READ_BYTES)
                except BlockingIOError:
                    open_any = True
                    break
                except InterruptedError:
                    continue
                if not data:
                    self._pending.unregister(read)
                    os.close(read)
                    del self.reads[read]
                    break
                if self._alive[fd]:
                    self._alive[fd] = _write_all(self.saved[fd], mark(data) if sinks and self._marked[fd] else data)
                text = self._decoders[fd].decode(data)
                for sink in sinks:
                    sink.program_wrote(text)
        return open_any

    def _run(self) -> None:
        self._thread = threading.current_thread()
        self._name(IDLE_NAME if self.restored else READER_NAME)
        poller = select.poll()
        for read in self.reads:
            poller.register(read, select.POLLIN)
        poller.register(self._wake_read, select.POLLIN)
        while self.reads:
            try:  # between sessions, nothing to watch for but the program's output
                events = poller.poll(-1 if self.restored else _POLL_MS)
            except InterruptedError:
                continue
            if any(fd == self._wake_read for fd, _ in events):
                os.read(self._wake_read, 16)
            with self._owner.lock:
                before, capturing = set(self.reads), not self.restored
                sinks = self._owner.live_sinks(self)
                self.drain(sinks)
                for sink in sinks:
                    sink.send_held_lines()
            for read in before - set(self.reads):
                poller.unregister(read)
            if capturing and self.restored:  # stopped here: its session ended unannounced
                self._owner.unbuffer()
        with self._owner.lock:
            self.over = True
            self._close(self._wake_read, self._wake_write, *self.saved.values())


class _Readers:
    """The threads that run the captures' readers. A capture is kept between sessions, so its
    reader runs as long as the process (named IDLE_NAME between sessions); one whose capture
    is over (its pipes closed under it) parks, named so too and woken by nothing, for the
    process's next capture instead of ending: a thread started and ended at every stop cost
    each process about 0.2 ms of the 5–6 ms a stop cost it when 32 ranks stopped and went on
    together on 2 cores (issue 22)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._pid = this_pid()
        self._lock = threading.Lock()
        self._parked = 0
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self, reader: Callable[[], None]) -> None:
        """Run `reader` on a parked thread, or on a new one."""
        if self._pid != this_pid():  # a forked child: its parent's parked threads are not here
            self._reset()
        with self._lock:
            parked = self._parked > 0
            if parked:
                self._parked -= 1
        if parked:
            self._jobs.put(reader)
        else:
            threading.Thread(target=self._serve, args=(reader,), name=READER_NAME, daemon=True).start()

    def _serve(self, reader: Callable[[], None]) -> None:
        thread = threading.current_thread()
        while True:
            reader()
            thread.name = IDLE_NAME
            with self._lock:
                self._parked += 1
            reader = self._jobs.get()
            thread.name = READER_NAME


_readers = _Readers()


class FdCapture:
    """The process's capture: started by the first sink attached, stopped when none is left."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._sinks: list[Sink] = []
        self._epoch: _Epoch | None = None  # the capture under way
        self._kept: _Epoch | None = None  # the last one, kept for the next session
        self._pid = this_pid()
        # sys.stdout and sys.stderr, when we made them line-buffered, with what they were
        self._line_buffered: list[tuple[_Reconfigurable, bool, bool]] = []

    def _forked(self) -> None:
        """In a forked child the parent's capture is not ours (its reader is not here): start afresh."""
        if self._pid != this_pid():
            self.lock = threading.RLock()
            self._sinks, self._epoch, self._kept, self._pid, self._line_buffered = [], None, None, this_pid(), []

    def attach(self, sink: Sink) -> None:
        """Send the program's output to `sink` too, capturing from now on if nothing did."""
        self._forked()
        _flush_program_buffers()  # what was written before the session is not part of it
        with self.lock:
            if sink not in self._sinks:
                self._sinks.append(sink)
            if self._epoch is None:
                try:
                    self._epoch = self._recaptured() or _Epoch(self)
                except NotPrintedTo:  # the session works, as a closed stdout's does: nothing of it to show
                    return
                except OSError as exc:  # out of descriptors: the session works, without the program's output
                    say(f"meshdbg: cannot capture the program's output ({exc})\n")
                    return
                self._line_buffer()

    def _recaptured(self) -> _Epoch | None:
        """The kept capture, over fd 1 and 2 again, if it is still usable (the lock held)."""
        kept, self._kept = self._kept, None
        if kept is None or not kept.usable():
            return None
        try:
            kept.capture()
        except OSError:  # fd 1 or 2 closed now: kept for a later stop that finds them open
            self._kept = kept
            raise
        return kept

    def detach(self, sink: Sink) -> None:
        """`sink`'s session is over: flush to it what came before, then let it go (and restore
        the descriptors when it was the last)."""
        self.sync()
        with self.lock:
            if sink in self._sinks:
                self._sinks.remove(sink)
            self.live_sinks(self._epoch)
        self.unbuffer()

    def sync(self) -> None:
        """Everything the program wrote so far is in the sinks (call before pdb writes)."""
        if self._pid != this_pid() or self._epoch is None:
            return
        _flush_program_buffers()
        with self.lock:
            if self._epoch is not None and self._epoch.holds_data():
                self._epoch.drain(self.live_sinks(self._epoch))

    def close(self) -> None:
        """At exit with a session still open (a daemon thread's): the descriptors back and the
        pipes emptied into them now, before daemon threads stop and the last flush, which
        would otherwise wait on a pipe nobody reads."""
        if self._pid != this_pid() or self._epoch is None:
            return
        _flush_program_buffers()
        with self.lock:
            epoch = self._epoch
            if epoch is not None:
                self._sinks = []
                self._stop()
                epoch.drain([])

    def live_sinks(self, epoch: _Epoch | None) -> list[Sink]:
        """The sinks still open (for `epoch`, the current capture; none for an old one); the
        capture stops when none is left. Called with the lock held."""
        if epoch is None or epoch is not self._epoch:
            return []
        self._sinks = [sink for sink in self._sinks if sink.open]
        if not self._sinks:
            self._stop()
        return list(self._sinks)

    def _stop(self) -> None:
        epoch, self._epoch = self._epoch, None
        if epoch is not None:
            epoch.restore()
            self._kept = None if epoch.over else epoch

    def _line_buffer(self) -> None:
        """sys.stdout and sys.stderr line-buffered, as on a terminal, so a print shows before
        pdb's next line, and each line in one write: unbuffered (`-u`, PYTHONUNBUFFERED), a
        print writes its pieces one by one, and the two pipes could then interleave a stderr
        line into a half-written stdout line, where a terminal, one device, keeps their order."""
        for stream in (sys.stdout, sys.stderr):
            before = (getattr(stream, "line_buffering", None), getattr(stream, "write_through", None))
            if before == (True, False) or not isinstance(before[0], bool) or not hasattr(stream, "reconfigure"):
                continue
            try:
                stream.reconfigure(line_buffering=True, write_through=False)
                self._line_buffered.append((cast(_Reconfigurable, stream), before[0], bool(before[1])))
            except Exception:  # a stream that cannot change: the sync before pdb's writes still orders it
                pass

    def unbuffer(self) -> None:
        """sys.stdout and sys.stderr as they were, once no capture runs. Never with the lock
        held nor on a reader thread: reconfiguring flushes, and a flush may wait for a reader."""
        with self.lock:
            if self._epoch is not None:
                return
            changed, self._line_buffered = self._line_buffered, []
        for stream, line_buffering, write_through in changed:
            try:
                stream.reconfigure(line_buffering=line_buffering, write_through=write_through)
            except Exception:  # replaced or closed meanwhile: nothing to give back
                pass


program_output = FdCapture()
atexit.register(program_output.close)
