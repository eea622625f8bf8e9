"""Marks, in a rank's stdout and stderr bytes, around output its session already shows.

Under `meshdbg run` a console attached to a rank shows that rank's output in its session, in
order with pdb's (meshdbg.worker.fd_capture), and the launcher also prints every rank's output
as prefixed log lines on the same terminal. So that a line is not printed twice there, a worker
whose launcher asks for it (MESHDBG_SHOWN_MARKS=1, set by `run` only) wraps what it passes on to its old
stdout/stderr while a session is open in these marks (an OSC sequence no program writes), and
the launcher's reader (`split_marked`) knows which bytes were also sent to a session.
"""

from __future__ import annotations

START = b"\x1b]7417;shown\x07"
END = b"\x1b]7417;end\x07"


def mark(data: bytes) -> bytes:
    return START + data + END


class MarkedSplitter:
    """Splits a byte stream into (shown, bytes) pieces, marks removed, across any reads."""

    def __init__(self) -> None:
        self.shown = False
        self._carry = b""  # a read's tail that may be the start of a mark

    def split(self, data: bytes) -> list[tuple[bool, bytes]]:
        data, self._carry = self._carry + data, b""
        pieces: list[tuple[bool, bytes]] = []
        while data:
            mark_ = END if self.shown else START
            at = data.find(mark_)
            if at < 0:
                keep = _partial_mark_at_end(data, mark_)
                data, self._carry = data[:len(data) - keep], data[len(data) - keep:]
                if data:
                    pieces.append((self.shown, data))
                break
            if at:
                pieces.append((self.shown, data[:at]))
            data = data[at + len(mark_):]
            self.shown = not self.shown
        return pieces

    def rest(self) -> bytes:
        """What is left at the end of the stream (a lone start of a mark is the program's text)."""
        carry, self._carry = self._carry, b""
        return carry


def _partial_mark_at_end(data: bytes, mark_: bytes) -> int:
    """How many bytes at the end of `data` begin `mark_` (0 if none)."""
    for size in range(min(len(mark_) - 1, len(data)), 0, -1):
        if data.endswith(mark_[:size]):
            return size
    return 0
