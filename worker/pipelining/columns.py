"""A schedule's actions as flat arrays (numpy), made once per schedule, and what whole-array
passes read off them: whether ``validate`` would pass, and the text table.

``Schedule.columns`` makes them the first time it is asked (None for lists holding an
``Overlap``) and keeps them: the lists are read-only. Making them costs one pass over the
actions in C (about 130 ns an action); the simulator (``vectorised``) and the table of a
large schedule then share them.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from meshdbg.worker.pipelining.bulk import type_of
from meshdbg.worker.pipelining.ir import ActionType, Schedule

T = ActionType
CODE = {action_type: code for code, action_type in enumerate(ActionType)}  # a type's code: its position
_COMM = np.array([t.is_comm for t in ActionType])
_PEER_OFFSET = np.array([{T.SEND_F: 1, T.RECV_F: -1, T.SEND_B: -1, T.RECV_B: 1}.get(t, 0) for t in ActionType])
_TYPE_TEXT = np.array([t.value.encode() for t in ActionType])

Ints = npt.NDArray[np.int64]


def _numbers(values: Ints) -> npt.NDArray[np.bytes_]:
    """The decimal text of 0 .. max(values), to index with ``values``."""
    return np.array([b"%d" % number for number in range(int(values.max(initial=0)) + 1)])


class Columns:
    """A schedule's actions as flat arrays, rank after rank: ``stage``, type ``code`` (its
    position in ``ActionType``) and ``microbatch``; rank r's are ``bounds[r]:bounds[r + 1]``."""

    def __init__(self, schedule: Schedule, code: Ints, stage: Ints, microbatch: Ints) -> None:
        self.schedule, self.code, self.stage, self.microbatch = schedule, code, stage, microbatch
        self.count = len(code)
        self.lengths = [len(rank_actions) for rank_actions in schedule.actions]
        self.bounds: list[int] = [0, *np.cumsum(self.lengths).tolist()]
        self.lowered = bool(_COMM[code].any())

    @classmethod
    def of(cls, schedule: Schedule) -> Columns | None:
        """The columns of ``schedule``; None when it holds an ``Overlap``."""
        flat = list(chain.from_iterable(schedule.actions))
        count = len(flat)
        code = np.fromiter(map(CODE.__getitem__, map(type_of, flat)), np.int64, count)
        if (code == CODE[T.OVERLAP_F_B]).any():
            return None
        return cls(schedule, code, np.fromiter(map(itemgetter(0), flat), np.int64, count),
                   np.fromiter(map(itemgetter(2), flat), np.int64, count))

    def table(self) -> str:
        """``render.format_table`` of the lists, the same text, built a column of bytes at a
        time (the half million cells of p=64 v=4 m=1,024: 0.21 -> 0.06 s)."""
        ranks, bounds = len(self.lengths), self.bounds
        steps = max(self.lengths, default=0)
        cells = np.strings.add(np.strings.add(_numbers(self.stage)[self.stage], _TYPE_TEXT[self.code]),
                               _numbers(self.microbatch)[self.microbatch])
        size = np.strings.str_len(cells)
        titles = [b"step", *(b"rank %d" % rank for rank in range(ranks))]
        columns = [np.array([titles[0], *(b"%d" % step for step in range(steps))])]
        columns += [np.concatenate([[title], cells[start:stop]]) for title, start, stop in zip(titles[1:], bounds, bounds[1:])]
        widths = [max(len(titles[0]), len(b"%d" % (steps - 1)) if steps else 0)]
        widths += [max(len(title), int(size[start:stop].max(initial=0))) for title, start, stop in zip(titles[1:], bounds, bounds[1:])]
        offsets = np.cumsum([0, *(width + 2 for width in widths)])
        text = np.full((steps + 1, int(offsets[-1])), ord(" "), np.uint8)  # a rank out of actions: blanks
        for column, width, offset in zip(columns, widths, offsets):
            padded = np.strings.ljust(column, width).astype(f"S{width}")
            text[:len(column), offset:offset + width] = padded.view(np.uint8).reshape(len(column), width)
        return b"\n".join(row.rstrip() for row in text.view(f"S{text.shape[1]}").ravel().tolist()).decode()

    def valid(self) -> bool:
        """Whether ``validation.validate`` finds nothing wrong (False: it tells what)."""
        schedule, stage, code, microbatch = self.schedule, self.stage, self.code, self.microbatch
        num_stages, microbatches = schedule.num_stages, schedule.microbatches
        if not ((stage >= 0) & (stage < num_stages) & (microbatch >= 0) & (microbatch < microbatches)).all():
            return False
        owner = np.array(schedule.stage_to_rank, np.int64)
        peer = stage + _PEER_OFFSET[code]  # a SEND/RECV's neighbour stage (its own for the rest)
        inside = (peer >= 0) & (peer < num_stages)
        has_peer = inside & (owner[np.where(inside, peer, 0)] != owner[stage])
        rank = np.repeat(np.arange(len(self.lengths)), self.lengths)
        if not ((owner[stage] == rank) & (has_peer | ~_COMM[code])).all():
            return False
        block = num_stages * microbatches
        counts = np.bincount((code * num_stages + stage) * microbatches + microbatch,
                             minlength=len(ActionType) * block).reshape(len(ActionType), num_stages, microbatches)
        forwards, fulls, inputs, weights = (counts[CODE[t]] for t in (T.F, T.B, T.I, T.W))
        if not ((forwards == 1).all() and np.array_equal(inputs, weights) and (fulls + inputs == 1).all()):
            return False
        if not self.lowered:
            return True
        crossing = np.nonzero(owner[:-1] != owner[1:])[0]  # stage s to s + 1 joins two ranks
        return all((counts[CODE[kind], stages] == 1).all() for kind, stages in (
            (T.SEND_F, crossing), (T.RECV_F, crossing + 1), (T.SEND_B, crossing + 1), (T.RECV_B, crossing)))
