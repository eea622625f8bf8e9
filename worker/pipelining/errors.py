"""The scheduler's exceptions, in one place so callers can catch them by kind.

Hierarchy (all are ``ValueError``s, because every one of them is about bad input)::

    ScheduleError                 anything the scheduler rejects
    ├── ActionParseError          a text form such as "1F0" that does not parse
    ├── ConstraintError           a kind's rule (e.g. microbatches vs ranks) is broken
    ├── ScheduleValidationError   action lists that are not a correct schedule
    └── DeadlockError             valid lists whose order can never finish

The CLI turns any ``ScheduleError`` into a one-line message and exit status 2.
"""


class ScheduleError(ValueError):
    """Base class: the scheduler rejected its input."""


class ActionParseError(ScheduleError):
    """A text form is not ``<stage><type><microbatch>``; the message quotes it."""


class ConstraintError(ScheduleError):
    """The requested (kind, ranks, stages per rank, microbatches) breaks a named rule."""


class ScheduleValidationError(ScheduleError):
    """The per-rank lists miss, repeat or misplace actions; ``problems`` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = "; ".join(problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(f"invalid schedule: {shown}{more}")


class DeadlockError(ScheduleError):
    """No rank can make progress; ``waiting`` maps each blocked rank to (step, action, need)."""

    def __init__(self, waiting: dict[int, tuple[int, str, str]]) -> None:
        self.waiting = waiting
        parts = [
            f"rank {rank} waits at step {step} ({action} needs {need})"
            for rank, (step, action, need) in sorted(waiting.items())
        ]
        super().__init__("deadlock: " + "; ".join(parts))
