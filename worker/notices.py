"""What a worker says about itself on its stderr: each problem once per process.

A problem that every thread meets (no server reachable, a burst of stops that cannot open a
session, a malformed setting) would otherwise print once per thread: thousands of the same line.
A program without a stderr (sys.stderr None, or closed: a daemon's) is told nothing: a notice
must never fail the stop it is about.
"""

from __future__ import annotations

import sys
import threading
from typing import TypeVar

from meshdbg.wire.environment import Variable
from meshdbg.wire.errors import UsageError

T = TypeVar("T")

_said: set[str] = set()  # what this process has said
_said_lock = threading.Lock()


def say(text: str) -> None:
    """Write `text` to the program's stderr, if it has one."""
    try:
        sys.stderr.write(text)
    except (AttributeError, ValueError, OSError):  # None, closed, or its descriptor closed
        pass


def say_once(text: str) -> None:
    """`say(text)` unless this process already said the same text."""
    with _said_lock:
        if text in _said:
            return
        _said.add(text)
    say(text)


def setting(variable: Variable[T]) -> T:
    """A worker's setting from its environment (meshdbg.wire.environment). A malformed value is
    said once, in one line, and the default used instead: a worker never fails on its settings."""
    try:
        return variable.get()
    except UsageError as exc:
        say_once(f"meshdbg: {exc}; using {variable.shown_default.strip('`')}\n")
        return variable.default
