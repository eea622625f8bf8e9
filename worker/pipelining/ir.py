"""The schedule IR: one action is (stage, type, microbatch); a schedule is one list per rank.

The text form ``<stage><type><microbatch>`` (``1F0``, ``2I13``, ``3SEND_F12``) is what
tables, CSV files and ``--json`` show, so parsing is strict: the whole string must match,
numbers are decimal without leading zeros (so text and action map one to one), and
anything else is rejected with an error that quotes the input.

An ``Overlap`` is one step that runs a forward and a backward of two different
microbatches together (DualPipe's overlapped F+B); its text form is torch's,
``(0F7;7B3)OVERLAP_F_B``. It is a 3-tuple like ``Action`` with the type in the middle, so
``map(type_of, actions)`` and ``action.type`` work on every list entry; passes that look
inside an entry use ``parts``.

``Action`` is a ``NamedTuple`` rather than a dataclass because the benchmark builds
millions of them; tuples are cheap to create, hash and compare.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from meshdbg.worker.pipelining.errors import ActionParseError

if TYPE_CHECKING:
    from meshdbg.worker.pipelining.columns import Columns


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
    OVERLAP_F_B = "OVERLAP_F_B"  # a forward and a backward run as one step (an ``Overlap``)

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
        return ACTION_TEXT % self


ACTION_TEXT = "%d%s%d"  # an Action's text form, `0F7`, in one C call (%s reads a StrEnum's value)


class Overlap(NamedTuple):
    """A forward and a backward (``B`` or ``I``) of other microbatches, run as one step.

    The runtime runs ``forward`` then ``backward``; the step starts when both may start.
    """

    forward: Action
    type: ActionType  # always ActionType.OVERLAP_F_B
    backward: Action

    def __str__(self) -> str:
        return f"({self.forward};{self.backward}){ActionType.OVERLAP_F_B.value}"


AnyAction = Action | Overlap


def overlap(forward: Action, backward: Action) -> Overlap:
    """The ``Overlap`` of ``forward`` (an F) and ``backward`` (a B or an I)."""
    return Overlap(forward, ActionType.OVERLAP_F_B, backward)


def parts(action: AnyAction) -> tuple[Action, ...]:
    """The plain actions an entry runs, in order: its two halves for an ``Overlap``."""
    if isinstance(action, Overlap):
        return (action.forward, action.backward)
    return (action,)


# Longest type names first so "SEND_F" is not read as a bare "F".
_TYPES = "|".join(
    sorted((t.value for t in ActionType if t is not ActionType.OVERLAP_F_B), key=len, reverse=True)
)
_NUMBER = r"(0|[1-9][0-9]*)"
_ACTION_RE = re.compile(rf"{_NUMBER}({_TYPES}){_NUMBER}")
_OVERLAP_RE = re.compile(rf"\(([^;()]*);([^;()]*)\){ActionType.OVERLAP_F_B.value}")


def parse_action(text: str) -> AnyAction:
    """Parse a text form like ``"2I13"`` or ``"(0F7;7B3)OVERLAP_F_B"``; errors quote ``text``."""
    match = _ACTION_RE.fullmatch(text)
    if match is not None:
        stage, kind, microbatch = match.groups()
        return Action(int(stage), ActionType(kind), int(microbatch))
    pair = _OVERLAP_RE.fullmatch(text)
    if pair is not None:
        forward, backward = (_ACTION_RE.fullmatch(half) for half in pair.groups())
        if forward and backward and forward[2] == "F" and backward[2] in ("B", "I"):
            return overlap(parse_action(pair[1]), parse_action(pair[2]))  # type: ignore[arg-type]
        raise ActionParseError(
            f"cannot parse action {text!r}: an overlap is (<forward>;<backward>)OVERLAP_F_B "
            f"such as '(0F7;7B3)OVERLAP_F_B': an F, then a B or an I"
        )
    raise ActionParseError(
        f"cannot parse action {text!r}: expected <stage><type><microbatch> such as "
        f"'1F0' or '3SEND_F12', with type one of {_TYPES.replace('|', ', ')}, "
        f"or an overlap such as '(0F7;7B3)OVERLAP_F_B'"
    )


class ActionPattern(NamedTuple):
    """Which plain actions a breakpoint stops before: a None stage or microbatch is any."""

    stage: int | None
    type: ActionType
    microbatch: int | None

    def matches(self, action: Action) -> bool:
        return (action.type is self.type and self.stage in (None, action.stage)
                and self.microbatch in (None, action.microbatch))

    def __str__(self) -> str:
        def part(number: int | None) -> str:
            return "*" if number is None else str(number)

        if self.stage is None and self.microbatch is None:
            return self.type.value
        return f"{part(self.stage)}{self.type.value}{part(self.microbatch)}"


_PATTERN_RE = re.compile(rf"({_NUMBER}|\*)?({_TYPES})({_NUMBER}|\*)?")


def parse_action_pattern(text: str) -> ActionPattern:
    """Parse ``3B5``, ``3F*``, ``*B5``, ``W`` (any stage and microbatch) or ``1RECV_F*``: the
    action notation with ``*`` (or nothing) for any stage or microbatch. Errors quote ``text``."""
    match = _PATTERN_RE.fullmatch(text)
    if match is None or (match[1] is None) != (match[4] is None):
        raise ActionParseError(
            f"cannot parse action {text!r}: expected <stage><type><microbatch> such as '3B5', with * for "
            f"any stage or microbatch ('3F*', '*B5'), or a type alone ('W'); types: {_TYPES.replace('|', ', ')}"
        )
    stage, kind, microbatch = match[1], match[3], match[4]
    number = lambda text: None if text in (None, "*") else int(text)  # noqa: E731
    return ActionPattern(number(stage), ActionType(kind), number(microbatch))


def format_action(action: AnyAction) -> str:
    """The text form of ``action``; ``parse_action`` inverts it exactly."""
    return str(action)


LARGE = 20_000  # actions: see Schedule.large


@dataclass(frozen=True)
class Schedule:
    """Per-rank action lists plus the facts needed to check and lower them.

    ``stage_to_rank[s]`` is the rank that runs stage ``s``; ``actions[r]`` is rank ``r``'s
    ordered list. The lists are not copied; treat them as read-only. A large schedule
    generated as flat arrays has ``columns.ActionRows`` there, which makes each list when
    first read.
    """

    kind: str
    stages_per_rank: int
    microbatches: int
    stage_to_rank: tuple[int, ...]
    actions: Sequence[list[AnyAction]]

    @property
    def ranks(self) -> int:
        """Number of ranks (one list each)."""
        return len(self.actions)

    @property
    def large(self) -> bool:
        """Whether it has ``LARGE`` actions or more: its checks, run and table then go through
        ``columns`` (numpy), the same results; below, the Python passes are as fast and numpy
        is not loaded."""
        total: int | None = getattr(self.actions, "total", None)  # ActionRows: without making the lists
        return (sum(map(len, self.actions)) if total is None else total) >= LARGE

    @cached_property
    def columns(self) -> Columns | None:
        """The actions as flat arrays (``columns``, numpy), made on first use and kept; None
        when the lists hold an ``Overlap``."""
        from meshdbg.worker.pipelining.columns import Columns  # numpy: for large schedules only

        return Columns.of(self)

    @property
    def num_stages(self) -> int:
        """Number of pipeline stages over all ranks."""
        return len(self.stage_to_rank)


def has_overlaps(actions: Sequence[list[AnyAction]]) -> bool:
    """True when any list holds an ``Overlap``."""
    return any(ActionType.OVERLAP_F_B in map(itemgetter(1), rank_actions) for rank_actions in actions)


def flatten(actions: Sequence[list[AnyAction]]) -> list[list[Action]]:
    """The lists with each ``Overlap`` replaced by its two halves."""
    return [[half for entry in rank_actions for half in parts(entry)] for rank_actions in actions]
