"""A schedule's actions as flat arrays (numpy), made once per schedule, and what whole-array
passes read off them: whether ``validate`` would pass, the text table, each action's text.

``Schedule.columns`` makes them the first time it is asked (None for lists holding an
``Overlap``) and keeps them: the lists are read-only. Making them from lists costs one pass
over the actions in C (about 130 ns an action); a schedule generated as arrays
(``generated``) has them already, its ``actions`` being the arrays (``ActionRows``). The
simulator (``vectorised``) and the table of a large schedule then share them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from itertools import chain
from operator import itemgetter
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

from meshdbg.worker.pipelining.bulk import new_action, type_of
from meshdbg.worker.pipelining.ir import ActionType, AnyAction, Schedule

T = ActionType
CODE = {action_type: code for code, action_type in enumerate(ActionType)}  # a type's code: its position
_COMM = np.array([t.is_comm for t in ActionType])
_PEER_OFFSET = np.array([{T.SEND_F: 1, T.RECV_F: -1, T.SEND_B: -1, T.RECV_B: 1}.get(t, 0) for t in ActionType])
# A type's text; an OVERLAP_F_B never stands in columns, so its long name would only widen them.
_PLAIN_TEXT = [b"" if t is T.OVERLAP_F_B else t.value.encode() for t in ActionType]
_TYPES = tuple(ActionType)  # a code's type

Ints = npt.NDArray[np.int64]
X = TypeVar("X")


def _texts(values: Ints) -> tuple[npt.NDArray[np.bytes_], Ints]:
    """The decimal texts of ``values``' numbers, and where each value's text is among them."""
    top = int(values.max(initial=0))
    if top <= len(values):  # small numbers (a schedule's): the texts of 0 .. top, at the value itself
        return np.array([b"%d" % number for number in range(top + 1)]), values
    distinct, where = np.unique(values, return_inverse=True)  # a loaded CSV's odd stage 10**12
    return np.array([b"%d" % number for number in distinct.tolist()]), where


class Rows(Sequence[list[X]]):
    """Per-rank lists, each made from flat arrays when first read (``_make`` of its slice)
    and kept: equal to the lists they stand for, so a caller who reads none pays for none."""

    def __init__(self, bounds: list[int]) -> None:
        self.bounds = bounds
        self._rows: list[list[X] | None] = [None] * (len(bounds) - 1)

    def _make(self, start: int, stop: int) -> list[X]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> list[X]: ...

    @overload
    def __getitem__(self, index: slice) -> list[list[X]]: ...

    def __getitem__(self, index: int | slice) -> list[X] | list[list[X]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = self._rows[index]
        if row is None:
            rank = range(len(self._rows))[index]
            row = self._rows[index] = self._make(self.bounds[rank], self.bounds[rank + 1])
        return row

    def __iter__(self) -> Iterator[list[X]]:
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __repr__(self) -> str:
        return repr(list(self))


class ActionRows(Rows[AnyAction]):
    """A schedule's actions as flat arrays, rank after rank: ``stage``, type ``code`` (its
    position in ``ActionType``) and ``microbatch``; rank r's are ``bounds[r]:bounds[r + 1]``.
    As a schedule's ``actions`` (a schedule generated as arrays, ``generated``), each rank's
    ``Action`` list is made when first read."""

    def __init__(self, code: Ints, stage: Ints, microbatch: Ints, lengths: list[int]) -> None:
        super().__init__([0, *np.cumsum(lengths).tolist()])
        self.code, self.stage, self.microbatch, self.lengths = code, stage, microbatch, lengths
        self.total = len(code)  # entries in all: what ``Schedule.large`` reads, no list made

    @classmethod
    def of(cls, actions: Sequence[list[AnyAction]]) -> ActionRows | None:
        """The arrays of per-rank lists; None when they hold an ``Overlap``."""
        if isinstance(actions, ActionRows):
            return actions
        flat = list(chain.from_iterable(actions))
        count = len(flat)
        code = np.fromiter(map(CODE.__getitem__, map(type_of, flat)), np.int64, count)
        if (code == CODE[T.OVERLAP_F_B]).any():
            return None
        return cls(code, np.fromiter(map(itemgetter(0), flat), np.int64, count),
                   np.fromiter(map(itemgetter(2), flat), np.int64, count), [len(rank_actions) for rank_actions in actions])

    def _make(self, start: int, stop: int) -> list[AnyAction]:
        kinds = map(_TYPES.__getitem__, self.code[start:stop].tolist())
        return list(map(new_action, zip(self.stage[start:stop].tolist(), kinds, self.microbatch[start:stop].tolist())))


class Columns:
    """A schedule's ``ActionRows`` (made from its lists on first use, unless its actions are
    already those arrays) and what whole-array passes read off them with the schedule's facts."""

    def __init__(self, schedule: Schedule, rows: ActionRows) -> None:
        self.schedule, self.code, self.stage, self.microbatch = schedule, rows.code, rows.stage, rows.microbatch
        self.count, self.lengths, self.bounds = rows.total, rows.lengths, rows.bounds
        self.lowered = bool(_COMM[self.code].any())

    @classmethod
    def of(cls, schedule: Schedule) -> Columns | None:
        """The columns of ``schedule``; None when it holds an ``Overlap``."""
        rows = ActionRows.of(schedule.actions)
        return None if rows is None else cls(schedule, rows)

    def texts(self) -> list[list[str]]:
        """Each rank's actions in text form (``str(action)``), as ``--json`` lists them."""
        cells = self._cells().astype(str)
        return [cells[start:stop].tolist() for start, stop in zip(self.bounds, self.bounds[1:])]

    def _cells(self) -> npt.NDArray[np.bytes_]:
        """Every action's text form as bytes, flat: its stage-and-type prefix, then its microbatch."""
        stages, stage = _texts(self.stage)
        prefixes = np.array([[b"%s%s" % (text, kind) for kind in _PLAIN_TEXT] for text in stages.tolist()])
        numbers, microbatch = _texts(self.microbatch)
        return np.strings.add(prefixes[stage, self.code], numbers[microbatch])

    def table(self) -> str:
        """``render.format_table`` of the lists, the same text, built a column of bytes at a
        time into one grid (the half million cells of p=64 v=4 m=1,024: 0.21 -> 0.03 s)."""
        ranks, bounds = len(self.lengths), self.bounds
        steps = max(self.lengths, default=0)
        cells = self._cells()
        size = np.strings.str_len(cells)
        titles = [b"step", *(b"rank %d" % rank for rank in range(ranks))]
        columns = [np.array([titles[0], *(b"%d" % step for step in range(steps))])]
        columns += [np.concatenate([[title], cells[start:stop]]) for title, start, stop in zip(titles[1:], bounds, bounds[1:])]
        widths = [max(len(titles[0]), len(b"%d" % (steps - 1)) if steps else 0)]
        widths += [max(len(title), int(size[start:stop].max(initial=0))) for title, start, stop in zip(titles[1:], bounds, bounds[1:])]
        offsets = np.cumsum([0, *(width + 2 for width in widths)])
        text = np.zeros((steps + 1, int(offsets[-1])), np.uint8)
        for column, width, offset in zip(columns, widths, offsets):
            text[:len(column), offset:offset + width] = column.astype(f"S{width}").view(np.uint8).reshape(len(column), width)
        np.maximum(text, ord(" "), out=text)  # NUL (padding, a rank out of actions) -> blank; text is above it
        return b"\n".join([row.rstrip() for row in text.view(f"S{text.shape[1]}").ravel().tolist()]).decode()

    @cached_property
    def row(self) -> Ints:
        """Each action's (type, stage) as one number, ``code * stages + stage``: what per-type,
        per-stage tables are indexed with (valid only once ``valid`` checked the stages)."""
        return self.code * self.schedule.num_stages + self.stage

    def valid(self) -> bool:
        """Whether ``validation.validate`` finds nothing wrong (False: it tells what)."""
        schedule, stage, code, microbatch = self.schedule, self.stage, self.code, self.microbatch
        num_stages, microbatches = schedule.num_stages, schedule.microbatches
        if not ((stage >= 0) & (stage < num_stages) & (microbatch >= 0) & (microbatch < microbatches)).all():
            return False
        owner = np.array(schedule.stage_to_rank, np.int64)
        # The rank each (type, stage) must be on; -1 for a SEND/RECV with no neighbour stage on another rank.
        peer = np.arange(num_stages) + _PEER_OFFSET[:, None]  # a SEND/RECV's neighbour stage (its own for the rest)
        inside = (peer >= 0) & (peer < num_stages)
        lonely = _COMM[:, None] & ~(inside & (owner[np.where(inside, peer, 0)] != owner))
        home = np.where(lonely, -1, owner).ravel()
        if not (home[self.row] == np.repeat(np.arange(len(self.lengths)), self.lengths)).all():
            return False
        # How often each (type, stage, microbatch) occurs, for the types there are.
        there = np.bincount(code, minlength=len(ActionType)) > 0
        slot = np.cumsum(there) - 1
        block = num_stages * microbatches
        counts = np.bincount(slot[code] * block + stage * microbatches + microbatch,
                             minlength=int(there.sum()) * block).reshape(-1, num_stages, microbatches)
        none = np.zeros((num_stages, microbatches), np.int64)
        forwards, fulls, inputs, weights, send_f, recv_f, send_b, recv_b = (
            counts[slot[CODE[t]]] if there[CODE[t]] else none
            for t in (T.F, T.B, T.I, T.W, T.SEND_F, T.RECV_F, T.SEND_B, T.RECV_B))
        if not ((forwards == 1).all() and np.array_equal(inputs, weights) and (fulls + inputs == 1).all()):
            return False
        if not self.lowered:
            return True
        crossing = np.nonzero(owner[:-1] != owner[1:])[0]  # stage s to s + 1 joins two ranks
        return all((counts_of[stages] == 1).all() for counts_of, stages in (
            (send_f, crossing), (recv_f, crossing + 1), (send_b, crossing + 1), (recv_b, crossing)))
