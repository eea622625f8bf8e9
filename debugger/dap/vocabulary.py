"""The Debug Adapter Protocol's own words that meshdbg sends: event names and stop reasons.

Kept in one place, apart from meshdbg's vocabulary (meshdbg.wire.vocabulary), which they
resemble ("stopped", "breakpoint") but do not mean: these are DAP's, as its schema spells them.
"""

from __future__ import annotations

from enum import StrEnum

from meshdbg.wire.vocabulary import StopReason


class Event(StrEnum):
    INITIALIZED = "initialized"
    STOPPED = "stopped"
    CONTINUED = "continued"
    THREAD = "thread"
    OUTPUT = "output"
    EXITED = "exited"
    TERMINATED = "terminated"


class Stopped(StrEnum):
    """A `stopped` event's reason."""

    STEP = "step"
    BREAKPOINT = "breakpoint"
    PAUSE = "pause"
    EXCEPTION = "exception"
    GOTO = "goto"


class Category(StrEnum):
    """An `output` event's category."""

    CONSOLE = "console"
    STDOUT = "stdout"
    STDERR = "stderr"


THREAD_EXITED = "exited"  # a `thread` event's reason when the rank ended

_STOP_REASONS: dict[str, Stopped] = {StopReason.BREAKPOINT: Stopped.BREAKPOINT, StopReason.INTERRUPT: Stopped.PAUSE,
                 StopReason.POST_MORTEM: Stopped.EXCEPTION, StopReason.POST_MORTEM_CALL: Stopped.EXCEPTION}


def stopped_reason(reason: str) -> Stopped:
    """The DAP reason of a session's first stop, from why it opened (a StopReason)."""
    return _STOP_REASONS.get(reason, Stopped.BREAKPOINT)
