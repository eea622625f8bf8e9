"""uvloop's event loop, leaving the blocking mode of file descriptors 0-2 as it finds it.

libuv's poll of a descriptor makes it non-blocking (uv_poll_init), and fds 0-2 usually share
one open terminal (or pipe) with each other and with the shell. Once the console watched
stdin, `meshdbg run`'s own writes to stdout, the ranks' log lines, met EAGAIN whenever the
terminal fell behind (a slow ssh link, Ctrl-S, a stalled tmux), and what they held was lost:
a rank's 300,000 lines stopped at line 142,645, with no error shown. The poll needs no
non-blocking descriptor: it only waits for readiness, and every reader of stdin here
(prompt_toolkit's, meshdbg.debugger.line_attach) reads once per readiness.
"""

from __future__ import annotations

import os
from typing import Any

import uvloop

STANDARD_FDS = (0, 1, 2)


class TerminalLoop(uvloop.Loop):
    """A uvloop loop whose readers of fds 0-2 keep each one's blocking mode."""

    def add_reader(self, fd: Any, callback: Any, *args: Any) -> None:  # type: ignore[override]  # (asyncio's is generic in the callback's arguments)
        number = fd if isinstance(fd, int) else fd.fileno()
        if number not in STANDARD_FDS:
            super().add_reader(fd, callback, *args)
            return
        blocking = os.get_blocking(number)
        try:
            super().add_reader(fd, callback, *args)
        finally:
            os.set_blocking(number, blocking)
