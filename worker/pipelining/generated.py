"""Large generated schedules made straight as flat arrays (numpy), no ``Action`` made.

``generate`` comes here instead of a kind's generator when the schedule has ``LARGE``
actions or more and its kind is in ``KINDS``: there every rank's order is a fixed
interleaving of its forwards and backwards (the interleaved walk of ``schedules``, GPipe,
looped BFS), so each action's place in its rank's list has a closed form and the lists are
written as whole arrays, all ranks at once. The ``Action`` lists are made from the arrays
only if a caller reads them (``columns.ActionRows``); ``meshdbg schedule``'s table, run and
``--json`` read the arrays, and ``lowering`` lowers and merges them as arrays (``lowered``,
``merged``). The orders are the Python generators' to the action
(``tests/worker/pipelining/test_generated.py``), which are torch's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from meshdbg.worker.pipelining.columns import CODE, ActionRows
from meshdbg.worker.pipelining.ir import ActionType

T = ActionType
Ints = npt.NDArray[np.int64]
# One kind of action in every rank's list: where it goes (ranks x n), its type, the stage
# base added to the rank (n), its microbatches (n).
Part = tuple[Ints, ActionType, Ints, Ints]


def _lists(ranks: int, width: int, parts: list[Part]) -> ActionRows:
    """Every rank's ``width`` actions, each part's written at its places."""
    code, stage, microbatch = (np.empty((ranks, width), np.int64) for _ in range(3))
    rank = np.arange(ranks)[:, None]
    for at, action_type, base, microbatches in parts:
        code[rank, at] = CODE[action_type]
        stage[rank, at] = rank + base
        microbatch[rank, at] = microbatches
    return ActionRows(code.ravel(), stage.ravel(), microbatch.ravel(), [width] * ranks)


class _Walk:
    """``schedules._VirtualWalk`` as arrays: forward k (0 <= k < n = chunks*m) runs microbatch
    ``microbatch[k]`` on stage ``forward[k]`` + rank, backward k the same microbatch on
    ``backward[k]`` + rank."""

    def __init__(self, ranks: int, group: int, chunks: int, microbatches: int) -> None:
        self.ranks = ranks
        k = self.k = np.arange(chunks * microbatches)
        chunk = (k // group) % chunks
        self.forward, self.backward = chunk * ranks, (chunks - 1 - chunk) * ranks
        self.microbatch = (k // (group * chunks)) * group + k % group

    def one_f_one_b(self, warmups: Ints) -> ActionRows:
        """``_VirtualWalk.one_f_one_b`` of every rank: w = its warm-up forwards, then F and B by
        turns: forward k at k (k < w), else 2k - w; backward k at w + 2k + 1 (k < n - w), else n + k."""
        k, n = self.k, len(self.k)
        w = np.minimum(warmups, n)[:, None]
        return _lists(self.ranks, 2 * n, [
            (np.where(k < w, k, 2 * k - w), T.F, self.forward, self.microbatch),
            (np.where(k < n - w, w + 2 * k + 1, n + k), T.B, self.backward, self.microbatch),
        ])

    def zero_bubble(self, warmups: Ints) -> ActionRows:
        """``_VirtualWalk.zero_bubble`` of every rank, rank r deferring each W by d = r backwards.

        Turn j (0 <= j < n) holds forward w + j (while j < n - w), I j, and W j - d (j >= d);
        it starts at s(j) = w + min(j, n - w) + j + max(0, j - d). The W that no turn holds
        (the last d) follow at 2n + i."""
        k, n = self.k, len(self.k)
        w = np.minimum(warmups, n)[:, None]
        d = np.arange(self.ranks)[:, None]

        def turn(j: Ints) -> Ints:
            return w + np.minimum(j, n - w) + j + np.maximum(0, j - d)

        late = k + d  # the turn holding W k
        return _lists(self.ranks, 3 * n, [
            (np.where(k < w, k, turn(k - w)), T.F, self.forward, self.microbatch),
            (turn(k) + (k < n - w), T.I, self.backward, self.microbatch),
            (np.where(late < n, turn(late) + (late < n - w) + 1, 2 * n + k), T.W, self.backward, self.microbatch),
        ])


def _rounds_group(ranks: int, microbatches: int) -> int:
    """torch's and Megatron's group: microbatches // rounds (see ``schedules.rounds_of``)."""
    return microbatches // max(1, microbatches // ranks)


def gpipe(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    return _Walk(ranks, 1, 1, microbatches).one_f_one_b(np.full(ranks, microbatches))


def one_f_one_b(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    return _Walk(ranks, 1, 1, microbatches).one_f_one_b(ranks - 1 - np.arange(ranks))


def interleaved_1f1b(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    group = _rounds_group(ranks, microbatches)
    warmups = (stages_per_rank - 1) * group + 2 * (ranks - 1 - np.arange(ranks))
    return _Walk(ranks, group, stages_per_rank, microbatches).one_f_one_b(warmups)


def interleaved_1f1b_tight(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    warmups = (stages_per_rank - 1) * ranks + ranks - 1 - np.arange(ranks)
    return _Walk(ranks, ranks, stages_per_rank, microbatches).one_f_one_b(warmups)


def zb1p(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    group = _rounds_group(ranks, microbatches)
    warmups = (stages_per_rank - 1) * group + ranks - 1 - np.arange(ranks)
    return _Walk(ranks, group, stages_per_rank, microbatches).zero_bubble(warmups)


def looped_bfs(ranks: int, stages_per_rank: int, microbatches: int) -> ActionRows:
    """Every forward stage by stage, then every backward in reverse: k at k and n + k."""
    k = np.arange(stages_per_rank * microbatches)
    chunk, microbatch = k // microbatches, k % microbatches
    return _lists(ranks, 2 * len(k), [
        (k, T.F, chunk * ranks, microbatch),
        (len(k) + k, T.B, (stages_per_rank - 1 - chunk) * ranks, microbatches - 1 - microbatch),
    ])


def lowered(rows: ActionRows, placement: tuple[int, ...]) -> ActionRows:
    """``lowering.lower`` of lists made as arrays: a RECV right before each F, I or B whose
    input (F) or output gradient (I, B) comes from another rank, a SEND right after each
    whose output (F) or input gradient (I, B) goes to one; an action lands after everything
    inserted before it."""
    code, stage, microbatch = rows.code, rows.stage, rows.microbatch
    owner = np.array(placement)
    after = np.append(owner[1:] != owner[:-1], False)  # stage s -> s + 1 crosses ranks
    before = np.insert(after[:-1], 0, False)  # stage s - 1 -> s does
    forward, backward = code == CODE[T.F], (code == CODE[T.I]) | (code == CODE[T.B])
    recv = (forward & before[stage]) | (backward & after[stage])
    send = (forward & after[stage]) | (backward & before[stage])
    grown = recv.astype(np.int64) + send
    at = np.arange(len(code)) + np.cumsum(grown) - send  # k + what was inserted before it + its RECV
    total = len(code) + int(grown.sum())
    new_code, new_stage, new_microbatch = (np.empty(total, np.int64) for _ in range(3))
    for mask, places, codes in (
        (slice(None), at, code),
        (recv, at[recv] - 1, np.where(forward[recv], CODE[T.RECV_F], CODE[T.RECV_B])),
        (send, at[send] + 1, np.where(forward[send], CODE[T.SEND_F], CODE[T.SEND_B])),
    ):
        new_code[places], new_stage[places], new_microbatch[places] = codes, stage[mask], microbatch[mask]
    inserted = np.concatenate([[0], np.cumsum(grown)])[rows.bounds]
    return ActionRows(new_code, new_stage, new_microbatch,
                      [length + grew for length, grew in zip(rows.lengths, np.diff(inserted).tolist())])


def merged(rows: ActionRows) -> ActionRows:
    """``lowering.merge_backward`` of lists made as arrays: an I directly followed on its rank by
    its own W becomes one B (two such pairs cannot overlap: an action is not both I and W)."""
    code, stage, microbatch = rows.code, rows.stage, rows.microbatch
    pair = np.zeros(len(code), bool)  # an I whose next action is its W
    pair[:-1] = ((code[:-1] == CODE[T.I]) & (code[1:] == CODE[T.W]) & (stage[:-1] == stage[1:])
                 & (microbatch[:-1] == microbatch[1:]))
    ends = np.array(rows.bounds[1:], np.int64) - 1
    pair[ends[ends >= 0]] = False  # a rank's last action has no next on its rank
    keep = ~np.roll(pair, 1)  # drop each pair's W
    merged_code = np.where(pair, CODE[T.B], code)
    dropped = np.concatenate([[0], np.cumsum(pair)])[rows.bounds]
    return ActionRows(merged_code[keep], stage[keep], microbatch[keep],
                      [length - gone for length, gone in zip(rows.lengths, np.diff(dropped).tolist())])


# kind -> its array generator: the kinds of schedules.AS_ARRAYS
KINDS: dict[str, Callable[[int, int, int], ActionRows]] = {
    "gpipe": gpipe,
    "1f1b": one_f_one_b,
    "interleaved-1f1b": interleaved_1f1b,
    "dora-dfs": interleaved_1f1b,
    "interleaved-1f1b-tight": interleaved_1f1b_tight,
    "looped-bfs": looped_bfs,
    "zb1p": zb1p,
}
