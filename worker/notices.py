"""What a worker says about itself on its stderr: each problem once per process.

A problem that every thread meets (no server reachable, a burst of stops that cannot open a
session) would otherwise print once per thread: thousands of the same line.
"""

from __future__ import annotations

import sys
import threading

_said: set[str] = set()  # what this process has said
_said_lock = threading.Lock()


def say_once(text: str) -> None:
    """Write `text` to stderr unless this process already wrote the same text."""
    with _said_lock:
        if text in _said:
            return
        _said.add(text)
    sys.stderr.write(text)
