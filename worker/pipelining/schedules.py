"""Schedule generators: (ranks, stages per rank, microbatches) -> one ordered list per rank.

``generate(kind, ...)`` checks the kind's constraints, then calls its generator from the
``SCHEDULES`` registry. Generators return compute actions only (F, B or F, I, W); the
lowering pass adds SEND/RECV. Expected bubbles are for F = 1, B = 2 (I = W = 1), no
communication cost, as fractions of the makespan unless said otherwise.

``gpipe``
    GPipe (Huang et al., 2019): every forward, then every backward. One stage per rank.
    Bubble (p-1)/(m+p-1); holds all m microbatches' activations.
``1f1b``
    1F1B / PipeDream-Flush (Narayanan et al., 2019; Megatron-LM): p-1-r warm-up forwards
    on rank r, then one forward one backward. One stage per rank. Same bubble as GPipe,
    (p-1)/(m+p-1), but rank r holds at most p-r activations.
``interleaved-1f1b`` (also ``dora-dfs``)
    Interleaved 1F1B (Megatron-LM, Narayanan et al., 2021): v stages per rank, stage
    c*p + r on rank r, microbatches walked in rounds of p through the chunks, warm-up of
    (v-1)*p + (p-1-r). The bubble shrinks by v: (p-1)/(v*m) of the ideal time. DORA's
    depth-first schedule is the same order with B and W merged, hence the alias.
``zb1p``
    Zero Bubble ZB-H1 on the interleaved placement (Qi et al., 2024, "Zero Bubble
    Pipeline Parallelism"): backward split into I and W; W is deferred to fill bubbles
    (see ``greedy``). A rank admits a new microbatch only while it holds fewer than v*p
    activations, interleaved 1F1B's peak. Bubble well under 1F1B's (29 against 33 for
    p = 4, m = 8, v = 1), near zero once m is large against p.
``zbv``
    Zero Bubble ZB-V (same paper, section 6): two stages per rank in a V, stages r and
    2p-1-r on rank r, so the last stage sits on rank 0 next to the first. New microbatches
    are admitted while a rank holds fewer than 2p half-size activations (1F1B's peak);
    bubble near zero for m >= 2p (3 time units in 51 for p = 4, m = 8).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat

from meshdbg.worker.pipelining.bulk import new_action, paused_gc
from meshdbg.worker.pipelining.errors import ConstraintError
from meshdbg.worker.pipelining.greedy import greedy_zero_bubble
from meshdbg.worker.pipelining.ir import Action, ActionType, Schedule

Generator = Callable[[int, int, int], list[list[Action]]]


def looped_placement(ranks: int, stages_per_rank: int) -> tuple[int, ...]:
    """Stage c*p + r on rank r: the interleaved (looped) placement."""
    return tuple(stage % ranks for stage in range(ranks * stages_per_rank))


def v_placement(ranks: int) -> tuple[int, ...]:
    """Stages r and 2p-1-r on rank r: the V placement of ZB-V."""
    return tuple(range(ranks)) + tuple(reversed(range(ranks)))


def gpipe(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[Action]]:
    """GPipe: all forwards, then all backwards (see the module docstring)."""
    return [
        [Action(rank, ActionType.F, mb) for mb in range(microbatches)]
        + [Action(rank, ActionType.B, mb) for mb in range(microbatches)]
        for rank in range(ranks)
    ]


def interleaved_1f1b(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[Action]]:
    """Megatron interleaved 1F1B; with one stage per rank this is plain 1F1B."""
    walk = _VirtualWalk(ranks, stages_per_rank, microbatches)
    return [walk.rank_order(rank) for rank in range(ranks)]


def one_f_one_b(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[Action]]:
    """1F1B: the interleaved order with one stage per rank (see the module docstring)."""
    return interleaved_1f1b(ranks, 1, microbatches)


class _VirtualWalk:
    """Interleaved 1F1B's order of virtual microbatches, shared by all ranks.

    Virtual microbatch k (0 <= k < chunks*m) is microbatch (k // (p*chunks))*p + k % p in
    chunk (k // p) % chunks; backwards walk the chunks in reverse. Only the stage
    (chunk*p + rank) depends on the rank, so the chunk and microbatch sequences are
    computed once and each rank's actions are built from them at C speed.
    """

    def __init__(self, ranks: int, chunks: int, microbatches: int) -> None:
        self.ranks, self.chunks = ranks, chunks
        virtual = range(chunks * microbatches)
        chunk = [(k // ranks) % chunks for k in virtual]
        self.forward_stage = [c * ranks for c in chunk]
        self.backward_stage = [(chunks - 1 - c) * ranks for c in chunk]
        self.microbatch = [(k // (ranks * chunks)) * ranks + k % ranks for k in virtual]

    def _actions(self, stage_base: list[int], rank: int, action_type: ActionType) -> list[Action]:
        """One action of ``action_type`` per virtual microbatch, in virtual order."""
        stages = map(rank.__add__, stage_base)
        return list(map(new_action, zip(stages, repeat(action_type), self.microbatch)))

    def rank_order(self, rank: int) -> list[Action]:
        """Rank ``rank``'s order: warm-up forwards, one forward one backward, cool-down backwards."""
        forwards = self._actions(self.forward_stage, rank, ActionType.F)
        backwards = self._actions(self.backward_stage, rank, ActionType.B)
        total, ranks = len(forwards), self.ranks
        warmup = min(total, (self.chunks - 1) * ranks + (ranks - 1 - rank))
        order = forwards[:warmup]
        order.extend(chain.from_iterable(zip(forwards[warmup:], backwards)))
        order.extend(backwards[total - warmup :])
        return order


def zb1p(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[Action]]:
    """ZB-H1 on the interleaved placement (see the module docstring)."""
    placement = looped_placement(ranks, stages_per_rank)
    return greedy_zero_bubble(placement, microbatches, limit=stages_per_rank * ranks)


def zbv(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[Action]]:
    """ZB-V: two stages per rank in a V (see the module docstring)."""
    return greedy_zero_bubble(v_placement(ranks), microbatches, limit=2 * ranks)


# kind name -> generator; placements and constraints are in the functions below.
SCHEDULES: dict[str, Generator] = {
    "gpipe": gpipe,
    "1f1b": one_f_one_b,
    "interleaved-1f1b": interleaved_1f1b,
    "dora-dfs": interleaved_1f1b,
    "zb1p": zb1p,
    "zbv": zbv,
}


def check_constraints(kind: str, ranks: int, stages_per_rank: int, microbatches: int) -> None:
    """Raise ``ConstraintError`` naming the broken rule, quoting the offending values."""
    if kind not in SCHEDULES:
        raise ConstraintError(f"unknown schedule kind {kind!r}; known kinds: {', '.join(SCHEDULES)}")
    for name, value in (("ranks", ranks), ("stages_per_rank", stages_per_rank), ("microbatches", microbatches)):
        if value < 1:
            raise ConstraintError(f"{kind}: {name} must be at least 1, got {name}={value}")
    if kind in ("gpipe", "1f1b") and stages_per_rank != 1:
        raise ConstraintError(f"{kind} runs one stage per rank, got stages_per_rank={stages_per_rank}")
    if kind == "zbv" and stages_per_rank != 2:
        raise ConstraintError(f"zbv places exactly two stages per rank (a V), got stages_per_rank={stages_per_rank}")
    if kind in ("interleaved-1f1b", "dora-dfs") and stages_per_rank > 1 and microbatches % ranks:
        raise ConstraintError(
            f"{kind} walks microbatches in rounds of one per rank, so microbatches must be a "
            f"multiple of ranks when stages_per_rank > 1: got microbatches={microbatches}, ranks={ranks}"
        )


def placement_for(kind: str, ranks: int, stages_per_rank: int) -> tuple[int, ...]:
    """``stage_to_rank`` for ``kind``: the V for zbv, the looped placement otherwise."""
    return v_placement(ranks) if kind == "zbv" else looped_placement(ranks, stages_per_rank)


def generate(kind: str, ranks: int, stages_per_rank: int, microbatches: int) -> Schedule:
    """The compute-only schedule of ``kind``; raises ``ConstraintError`` on bad input."""
    check_constraints(kind, ranks, stages_per_rank, microbatches)
    with paused_gc():
        actions = SCHEDULES[kind](ranks, stages_per_rank, microbatches)
    return Schedule(
        kind=kind,
        stages_per_rank=stages_per_rank,
        microbatches=microbatches,
        stage_to_rank=placement_for(kind, ranks, stages_per_rank),
        actions=actions,
    )
