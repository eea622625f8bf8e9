"""pdb output of any size on a wire whose messages must stay small: chunks, safe text, tails.

gRPC refuses messages over 4 MiB by default, and one message holding a command's whole
output would hold it in memory on every hop at once. So output travels as `OutputChunk`s of
at most OUTPUT_CHUNK_CHARS characters (at most 4 bytes each in UTF-8: ≤ 1 MiB), and whoever
keeps output for later keeps only a bounded `Tail` of it. Shared by workers and the server.
"""

from __future__ import annotations

from typing import Iterator

from meshdbg.wire.errors import UsageError
from meshdbg.wire.text import wire_text

OUTPUT_CHUNK_CHARS = 256 * 1024
TAIL_CHARS = 64 * 1024  # what the server keeps of a session's output for an attach replay


def chunks(text: str, stop: int | None = None, size: int = OUTPUT_CHUNK_CHARS) -> Iterator[str]:
    """`text[:stop]` in pieces of at most `size` characters, made one at a time, wire-safe."""
    for start in range(0, len(text) if stop is None else stop, size):
        yield wire_text(text[start:min(start + size, len(text) if stop is None else stop)])


def tail_start(text: str, size: int = OUTPUT_CHUNK_CHARS) -> int:
    """Where the last piece of `text` (at most `size` long) starts: what precedes it goes as
    chunks, the piece itself with the message it ends (a prompt, an end)."""
    return 0 if len(text) <= size else len(text) - (len(text) % size or size)


class Tail:
    """The last `limit` characters of a growing text, with a note of how much was dropped.

    It knows how much of its end is text added `aside` (a session's: the program's own output
    between pdb's commands), which a reader that showed that text already leaves out."""

    def __init__(self, limit: int = TAIL_CHARS) -> None:
        self._limit = limit
        self._parts: list[str] = []
        self._length = 0
        self.dropped = 0
        self._aside = 0  # characters at the end added `aside`, since the last text that was not

    def add(self, text: str, aside: bool = False) -> None:
        if not text:
            return
        self._parts.append(text)
        self._length += len(text)
        self._aside = self._aside + len(text) if aside else 0
        if self._length > 2 * self._limit:
            self._compact()

    def _compact(self) -> None:
        joined = "".join(self._parts)
        keep = joined[-self._limit:]
        self.dropped += len(joined) - len(keep)
        self._parts, self._length = [keep], len(keep)

    def clear(self) -> None:
        self._parts, self._length, self.dropped, self._aside = [], 0, 0, 0

    def text(self, with_aside: bool = True) -> str:
        """The kept text, led by a note when earlier output was dropped; not `with_aside`, with
        no text added aside at its end (and no note when nothing else is left)."""
        if self._length > self._limit:
            self._compact()
        body = "".join(self._parts)
        if not with_aside and self._aside:
            body = body[:max(0, len(body) - self._aside)]
            if not body:
                return ""
        if self.dropped:
            return f"[meshdbg: {self.dropped} earlier characters of output not kept]\n{body}"
        return body


MAX_LINE_BYTES = 3 * 1024 * 1024  # a pdb command line in UTF-8: under gRPC's 4 MiB message limit, with room


def check_line(line: str) -> str:
    """`line`, wire-safe, if a pdb command may be that long (UsageError otherwise): the one
    limit, in UTF-8 bytes as gRPC counts them, that every entry point applies (the console,
    `cast`, an attached session, and the server for what reaches it)."""
    text = line if line.isascii() else wire_text(line)  # (every command's path: no call for the usual line)
    if len(text) * 4 > MAX_LINE_BYTES:  # no encoding for a line that cannot be over
        size = len(text.encode("utf-8"))
        if size > MAX_LINE_BYTES:
            raise UsageError(f"a pdb command line is limited to {MAX_LINE_BYTES // 2**20} MiB of UTF-8 "
                             f"(this one has {size / 2**20:.1f} MiB)")
    return text
