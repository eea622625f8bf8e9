"""The schedule IR: one action is (stage, type, microbatch); a schedule is one list per rank.

The text form ``<stage><type><microbatch>`` (``1F0``, ``2I13``, ``3SEND_F12``) is what
tables, CSV files and ``--json`` show, so parsing is strict: the whole string must match,
numbers are decimal without leading zeros (so text and action map one to one), and
anything else is rejected with an error that quotes the input.

``Action`` is a ``NamedTuple`` rather than a dataclass because the benchmark builds
millions of them; tuples are cheap to create, hash and compare.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import NamedTuple

from meshdbg.worker.pipelining.errors import ActionParseError


class ActionType(enum.StrEnum):
    """What an action does. ``I``+``W`` is a backward split in two; ``B`` is both at once."""

    F = "F"  # forward
    I = "I"  # noqa: E741 - backward with respect to the stage's inputs
    W = "W"  # backward with respect to the stage's weights
    B = "B"  # full backward (I and W together)
    SEND_F = "SEND_F"  # send stage's output to the next stage
    RECV_F = "RECV_F"  # receive stage's input from the previous stage
    SEND_B = "SEND_B"  # send the gradient of stage's input to the previous stage
    RECV_B = "RECV_B"  # receive the gradient of stage's output from the next stage

    @property
    def is_comm(self) -> bool:
        """True for the four SEND/RECV types, which lowering inserts."""
        return self in _COMM


_COMM = frozenset({ActionType.SEND_F, ActionType.RECV_F, ActionType.SEND_B, ActionType.RECV_B})


class Action(NamedTuple):
    """One step of one rank: ``type`` applied to ``stage`` for ``microbatch``."""

    stage: int
    type: ActionType
    microbatch: int

    def __str__(self) -> str:
        return f"{self.stage}{self.type.value}{self.microbatch}"


# Longest type names first so "SEND_F" is not read as a bare "F".
_TYPES = "|".join(sorted((t.value for t in ActionType), key=len, reverse=True))
_NUMBER = r"(0|[1-9][0-9]*)"
_ACTION_RE = re.compile(rf"{_NUMBER}({_TYPES}){_NUMBER}")


def parse_action(text: str) -> Action:
    """Parse a text form like ``"2I13"``; raise ``ActionParseError`` quoting ``text``."""
    match = _ACTION_RE.fullmatch(text)
    if match is None:
        raise ActionParseError(
            f"cannot parse action {text!r}: expected <stage><type><microbatch> such as "
            f"'1F0' or '3SEND_F12', with type one of {', '.join(t.value for t in ActionType)}"
        )
    stage, kind, microbatch = match.groups()
    return Action(int(stage), ActionType(kind), int(microbatch))


def format_action(action: Action) -> str:
    """The text form of ``action``; ``parse_action`` inverts it exactly."""
    return str(action)


@dataclass(frozen=True)
class Schedule:
    """Per-rank action lists plus the facts needed to check and lower them.

    ``stage_to_rank[s]`` is the rank that runs stage ``s``; ``actions[r]`` is rank ``r``'s
    ordered list. The lists are not copied; treat them as read-only.
    """

    kind: str
    stages_per_rank: int
    microbatches: int
    stage_to_rank: tuple[int, ...]
    actions: list[list[Action]]

    @property
    def ranks(self) -> int:
        """Number of ranks (one list each)."""
        return len(self.actions)

    @property
    def num_stages(self) -> int:
        """Number of pipeline stages over all ranks."""
        return len(self.stage_to_rank)
