"""pdb's stdout in a worker: what pdb writes, with the program's own output in order, streamed
to the session once it grows large.

Small output waits for the next prompt and travels with it (one round trip per command);
output past OUTPUT_CHUNK_CHARS goes out at once in chunks, so `p 'x'*100_000_000` never
holds more than the text pdb built itself, and the client sees it as it comes.

The program's output (fd 1 and 2, meshdbg.worker.fd_capture) joins it where a terminal would
show it: everything the program wrote before a write of pdb's comes before it. While pdb
waits at its prompt, or runs a command that has written nothing yet (`n` over a loop that
prints), the program's output goes out at once, so the person sees it as it comes. A command
that runs on after writing (`!for i in range(5): print(i); time.sleep(1)`) has its complete
lines sent once they have waited HELD_S (the capture's reader looks every few hundred
milliseconds: `send_held_lines`), as a terminal would show them, not all at its end.
"""

from __future__ import annotations

import io
import sys
import threading
import time
from typing import Callable

from meshdbg.wire.chunks import OUTPUT_CHUNK_CHARS
from meshdbg.wire.text import as_written_by
from meshdbg.worker.fd_capture import program_output
from meshdbg.worker.remote import RemoteSession

HELD_S = 0.1  # a command's complete lines wait at most this long (plus the reader's look) before they go out


class StreamedOutput(io.TextIOBase):
    """A text sink that `take()`s what is pending, streaming to `session()` past a chunk.

    It remembers its last write, which is the prompt when pdb reads a line (cmd.Cmd writes it
    in one piece, then reads): `(Pdb) `, `(com) `, the recursive debugger's `((Pdb)) `.
    """

    last_write = ""

    def __init__(self, session: Callable[[], RemoteSession | None]) -> None:
        super().__init__()
        self._session = session
        self._parts: list[str] = []
        self._pending = 0
        self._lock = threading.Lock()  # pdb's thread and the capture's reader both add text
        self._live = False  # pdb has written nothing since its last prompt: the program's text goes out at once
        self._held_since = 0.0  # (time.monotonic) when the buffer last went from empty to holding text

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        size = len(text)
        text = as_written_by(text, getattr(sys.__stdout__, "errors", None) or "strict")  # pdb's local stdout
        program_output.sync()
        with self._lock:
            self.last_write = text
            self._live = False
            self._add(text)
        return size

    def take(self, synced: bool = False) -> str:
        """Everything written and not yet sent (the program's output so far included); the
        buffer starts empty again. `synced`: the caller's last write (pdb's prompt, just
        written before pdb reads) brought the program's output in a moment ago, and only pdb's
        own code ran since: no second sync (issue 22: one of a `p x`'s three). What another
        thread of the program writes meanwhile goes out as it comes, as it would have a moment later."""
        if not synced:
            program_output.sync()
        with self._lock:
            self._live = True
            return self._take()

    def retract_prompt(self) -> None:
        """Take back the prompt pdb just wrote, still unsent, which no one will answer (a
        Resume unwinding to pdb's own prompt goes on at once): it showed as a stray `(Pdb)`."""
        with self._lock:
            if self._parts and self._parts[-1] is self.last_write and not self.last_write.endswith("\n"):
                self._pending -= len(self._parts.pop())

    # ---- the program's side (meshdbg.worker.fd_capture.Sink) ------------------------------

    def open_session(self) -> None:
        """The session is open: the program's output comes here too until it ends."""
        program_output.attach(self)

    def close_session(self) -> None:
        """The session ends: the program's output so far is in the buffer, the rest is not ours."""
        program_output.detach(self)

    @property
    def open(self) -> bool:
        remote = self._session()
        return remote is not None and remote.owned

    def program_wrote(self, text: str) -> None:
        with self._lock:
            if self._parts and self._parts[-1] is self.last_write and self.last_write.endswith(" "):
                # pdb's prompt (`(Pdb) `, `>>> `) is written and about to be sent: the person sees this above it
                self._parts.insert(-1, text)
                self._pending += len(text)
                return
            self._add(text)
            if self._live and self._pending:
                remote = self._session()
                if remote is not None:
                    remote.send_output(self._take())

    def send_held_lines(self) -> None:
        """The complete lines of a command still running that have waited HELD_S: out now, so
        a long command's output shows as it comes (called by the capture's reader). The text
        after the last newline stays, the prompt pdb may just have written among it."""
        with self._lock:
            if not self._parts or time.monotonic() - self._held_since < HELD_S:
                return
            last = self._parts[-1]
            if last.endswith("\n"):
                held = self._take()
            else:
                text = "".join(self._parts)
                cut = text.rfind("\n") + 1
                if not cut:
                    return
                held, rest = text[:cut], (last if len(last) == len(text) - cut else text[cut:])
                self._parts, self._pending = [rest], len(rest)
                self._held_since = time.monotonic()
            remote = self._session()
            if remote is not None:
                remote.send_output(held)

    # ---- the buffer (with the lock held) -------------------------------------------------

    def _add(self, text: str) -> None:
        if not self._parts:
            self._held_since = time.monotonic()
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= OUTPUT_CHUNK_CHARS:
            remote = self._session()
            if remote is not None:
                remote.send_output(self._take())

    def _take(self) -> str:
        text = "".join(self._parts)
        self._parts, self._pending = [], 0
        return text
