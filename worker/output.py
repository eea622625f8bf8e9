"""pdb's stdout in a worker: what pdb writes, streamed to the session once it grows large.

Small output waits for the next prompt and travels with it (one round trip per command);
output past OUTPUT_CHUNK_CHARS goes out at once in chunks, so `p 'x'*100_000_000` never
holds more than the text pdb built itself, and the client sees it as it comes.
"""

from __future__ import annotations

import io
from typing import Callable

from meshdbg.wire.chunks import OUTPUT_CHUNK_CHARS
from meshdbg.worker.remote import RemoteSession


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

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.last_write = text
        self._parts.append(text)
        self._pending += len(text)
        if self._pending >= OUTPUT_CHUNK_CHARS:
            remote = self._session()
            if remote is not None:
                remote.send_output(self.take())
        return len(text)

    def take(self) -> str:
        """Everything written and not yet sent; the buffer starts empty again."""
        text = "".join(self._parts)
        self._parts, self._pending = [], 0
        return text
