"""Schedule generators: (ranks, stages per rank, microbatches) -> one ordered list per rank.

``generate(kind, ...)`` checks the kind's constraints, then calls its generator from the
``SCHEDULES`` registry (for a large schedule of a kind in ``AS_ARRAYS``, its twin in
``generated``, which writes the same lists as arrays). Generators return compute actions
only (F, B or F, I, W, and overlapped F+B); the lowering pass adds SEND/RECV. A kind named after a published
schedule is that schedule: ``tests/worker/pipelining/test_torch_orders.py`` compares each
with torch 2.13's ``torch.distributed.pipelining`` class over a grid. Figures below are
for F = 1, B = 2 (I = W = 1) and no communication cost unless said otherwise.

``gpipe``
    GPipe (Huang et al., 2019): every forward, then every backward. One stage per rank.
    Bubble (p-1)/(m+p-1); holds all m microbatches' activations. = torch ScheduleGPipe.
``1f1b``
    1F1B / PipeDream-Flush (Narayanan et al., 2019): p-1-r warm-up forwards on rank r, then
    one forward one backward. One stage per rank. Same bubble as GPipe, but rank r holds
    at most p-r activations. The textbook order (torch's Schedule1F1B runs it too).
``interleaved-1f1b`` (also ``dora-dfs``)
    Interleaved 1F1B as Megatron-LM (Narayanan et al., 2021) and torch's
    ScheduleInterleaved1F1B order it: v stages per rank, stage c*p + r on rank r;
    microbatches walk the chunks in groups of m // rounds, rounds = max(1, m // p)
    (so m need not be a multiple of p, but m % rounds == 0); rank r warms up with
    (v-1)*(m // rounds) + 2*(p-1-r) forwards. Monarch's ``dora-dfs`` is this order with
    its B and W merged, which is what B is here, hence the alias.
``interleaved-1f1b-tight``
    The same walk in groups of p with the shorter warm-up (v-1)*p + (p-1-r) (m must be a
    multiple of p when v > 1). It holds fewer activations (peak 8 against 11 on rank 0 for
    p = 4, v = 2, m = 8) and ties on makespan with free communication (57 = the lower
    bound), but each rank enters its steady state with no slack, so a send/recv cost
    lands on the critical path: with send = recv = 0.5 it takes 92 against 89.
``looped-bfs``
    Breadth-first pipeline parallelism (Lamy-Poirier, 2022), torch's ScheduleLoopedBFS:
    each local stage runs all its forwards before the next, then backwards in reverse.
``zb1p``
    ZB-H1 (Qi et al., 2024, "Zero Bubble Pipeline Parallelism") on the looped placement,
    as torch's ScheduleInterleavedZeroBubble orders it: the interleaved walk with a
    warm-up of (v-1)*(m // rounds) + (p-1-r), backward split into I and W, rank r
    deferring each W by r backwards.
``zb1p-greedy``
    A list schedule on the same placement (see ``greedy``): ranks never idle while an
    action is ready, I first, W deferred into bubbles, at most v*p activations admitted.
``zbv``
    ZB-V (same paper, section 6), torch's ScheduleZBVZeroBubble: two stages per rank in a
    V, stages r and 2p-1-r on rank r, so the last stage sits on rank 0 next to the first.
``zbv-greedy``
    The greedy list schedule on the V placement, admitting up to 2p activations.
``dualpipev``
    DualPipeV (DeepSeek-V3's DualPipe folded onto the V), torch's ScheduleDualPipeV:
    the steady state runs a forward of one chunk overlapped with a backward of the other
    as one step (``Overlap``, ``(0F7;7B3)OVERLAP_F_B``). Two stages per rank, m >= 2p.

Where meshdbg's own variants win and lose, lowered, F = 1, B = 2, I = W = 1 (``python
bench/bench_schedule.py``, its ``variants`` lines; the runtime's steps/s are in README.md):

* ``interleaved-1f1b-tight`` wins on memory (rank 0 peak 8 / 16 against 11 / 23 for
  p = 4 / 8, v = 2), ties on makespan with free communication, loses 3 units with
  send = recv = 0.5 (92 against 89 for p = 4, m = 8; 172 against 169 for m = 16).
* ``zb1p-greedy`` and ``zbv-greedy`` tie with torch's orders at p = 4 with free
  communication and lose everywhere else: more memory (zbv-greedy 11 against 8 at p = 4),
  a longer makespan at p = 8 (108 against 103), and much longer with send = recv = 0.5
  (98 against 86 for zb1p, p = 4, m = 8), because they were planned for free
  communication.
* ``dualpipev`` against ``zbv`` on the same V: 54 against 51 (p = 4, m = 8) and one more
  activation: the simulator runs an overlap's halves back to back, as the runtime does on
  one CPU stream, so what DualPipe gains by overlapping one half's communication with the
  other's compute on a GPU is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, repeat

from meshdbg.worker.pipelining.bulk import new_action, paused_gc
from meshdbg.worker.pipelining.errors import ConstraintError
from meshdbg.worker.pipelining.greedy import greedy_zero_bubble
from meshdbg.worker.pipelining.ir import LARGE, Action, ActionType, AnyAction, Schedule, overlap

T = ActionType
Generator = Callable[[int, int, int], list[list[AnyAction]]]


def looped_placement(ranks: int, stages_per_rank: int) -> tuple[int, ...]:
    """Stage c*p + r on rank r: the interleaved (looped) placement."""
    return tuple(stage % ranks for stage in range(ranks * stages_per_rank))


def v_placement(ranks: int) -> tuple[int, ...]:
    """Stages r and 2p-1-r on rank r: the V placement of ZB-V and DualPipeV."""
    return tuple(range(ranks)) + tuple(reversed(range(ranks)))


def rounds_of(ranks: int, microbatches: int) -> int:
    """Rounds of torch's and Megatron's interleaved orders: max(1, microbatches // ranks)."""
    return max(1, microbatches // ranks)


def gpipe(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """GPipe: all forwards, then all backwards (see the module docstring)."""
    return [
        [Action(rank, kind, mb) for kind in (T.F, T.B) for mb in range(microbatches)]
        for rank in range(ranks)
    ]


def one_f_one_b(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """Textbook 1F1B: p-1-r warm-up forwards, then one forward one backward."""
    walk = _VirtualWalk(ranks, 1, 1, microbatches)
    return [walk.one_f_one_b(rank, ranks - 1 - rank) for rank in range(ranks)]


def interleaved_1f1b(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """torch's ScheduleInterleaved1F1B, Megatron-LM's interleaved order (module docstring)."""
    group = microbatches // rounds_of(ranks, microbatches)
    walk = _VirtualWalk(ranks, group, stages_per_rank, microbatches)
    warmup = (stages_per_rank - 1) * group
    return [walk.one_f_one_b(rank, warmup + 2 * (ranks - 1 - rank)) for rank in range(ranks)]


def interleaved_1f1b_tight(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """The interleaved walk with the shorter warm-up (v-1)*p + (p-1-r) (module docstring)."""
    walk = _VirtualWalk(ranks, ranks, stages_per_rank, microbatches)
    warmup = (stages_per_rank - 1) * ranks
    return [walk.one_f_one_b(rank, warmup + ranks - 1 - rank) for rank in range(ranks)]


def zb1p(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """torch's ScheduleInterleavedZeroBubble (module docstring)."""
    group = microbatches // rounds_of(ranks, microbatches)
    walk = _VirtualWalk(ranks, group, stages_per_rank, microbatches)
    warmup = (stages_per_rank - 1) * group
    return [walk.zero_bubble(rank, warmup + ranks - 1 - rank, deferred=rank) for rank in range(ranks)]


class _VirtualWalk:
    """The interleaved orders' sequence of virtual microbatches, shared by all ranks.

    Forward k (0 <= k < chunks*m) runs microbatch (k // (g*chunks))*g + k % g in chunk
    (k // g) % chunks, for groups of g microbatches (torch: m // rounds; the tight order:
    p); backward k walks the chunks in reverse. Only the stage (chunk*p + rank) depends on
    the rank, so the sequences are computed once and each rank's actions are built from
    them at C speed.
    """

    def __init__(self, ranks: int, group: int, chunks: int, microbatches: int) -> None:
        self.ranks = ranks
        virtual = range(chunks * microbatches)
        chunk = [(k // group) % chunks for k in virtual]
        self.forward_stage = [c * ranks for c in chunk]
        self.backward_stage = [(chunks - 1 - c) * ranks for c in chunk]
        self.microbatch = [(k // (group * chunks)) * group + k % group for k in virtual]

    def _actions(self, stage_base: list[int], rank: int, action_type: ActionType) -> list[Action]:
        """One action of ``action_type`` per virtual microbatch, in virtual order."""
        stages = map(rank.__add__, stage_base)
        return list(map(new_action, zip(stages, repeat(action_type), self.microbatch)))

    def one_f_one_b(self, rank: int, warmup: int) -> list[AnyAction]:
        """``warmup`` forwards, then one forward one backward, then the remaining backwards."""
        forwards = self._actions(self.forward_stage, rank, T.F)
        backwards = self._actions(self.backward_stage, rank, T.B)
        total = len(forwards)
        warmup = min(total, warmup)
        order: list[AnyAction] = list(forwards[:warmup])
        order.extend(chain.from_iterable(zip(forwards[warmup:], backwards)))
        order.extend(backwards[total - warmup :])
        return order

    def zero_bubble(self, rank: int, warmup: int, deferred: int) -> list[AnyAction]:
        """As ``one_f_one_b`` with I for B, each W following the I ``deferred`` backwards later."""
        forwards = self._actions(self.forward_stage, rank, T.F)
        inputs = self._actions(self.backward_stage, rank, T.I)
        weights = self._actions(self.backward_stage, rank, T.W)
        total = len(forwards)
        warmup = min(total, warmup)
        order: list[AnyAction] = list(forwards[:warmup])
        for j, backward in enumerate(inputs):
            if j < total - warmup:
                order.append(forwards[warmup + j])
            order.append(backward)
            if j >= deferred:
                order.append(weights[j - deferred])
        order.extend(weights[max(0, total - deferred) :])
        return order


def looped_bfs(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """torch's ScheduleLoopedBFS: stage by stage, all forwards, then backwards in reverse."""
    orders: list[list[AnyAction]] = []
    for rank in range(ranks):
        stages = range(rank, ranks * stages_per_rank, ranks)
        order: list[AnyAction] = [Action(s, T.F, mb) for s in stages for mb in range(microbatches)]
        order += [Action(s, T.B, mb) for s in reversed(stages) for mb in reversed(range(microbatches))]
        orders.append(order)
    return orders


def zbv(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """torch's ScheduleZBVZeroBubble (ZB-V, module docstring)."""
    return [_ZbvRank(ranks, rank, microbatches).order() for rank in range(ranks)]


class _ZbvRank:
    """One rank of ZB-V, phase by phase as torch builds it; chunk 0 is stage r, chunk 1 2p-1-r.

    torch plans for max(2p-1, m) microbatches and drops the ones past m; so does this.
    """

    def __init__(self, ranks: int, rank: int, microbatches: int) -> None:
        self.ranks, self.rank, self.microbatches = ranks, rank, microbatches
        self.stage = (rank, 2 * ranks - 1 - rank)
        self.count = {(chunk, kind): 0 for chunk in (0, 1) for kind in (T.F, T.I, T.W)}
        self.actions: list[AnyAction] = []

    def add(self, chunk: int, *kinds: ActionType) -> None:
        """Append the next microbatch of each of ``kinds`` on ``chunk``."""
        for kind in kinds:
            microbatch = self.count[chunk, kind]
            self.count[chunk, kind] += 1
            if microbatch < self.microbatches:
                self.actions.append(Action(self.stage[chunk], kind, microbatch))

    def order(self) -> list[AnyAction]:
        p, r, count = self.ranks, self.rank, self.count
        planned = max(2 * p - 1, self.microbatches)
        for _ in range(2 * (p - r) - 1):
            self.add(0, T.F)
        for _ in range(r):
            self.add(1, T.F)
            self.add(0, T.F)
        for _ in range(p - r):
            self.add(1, T.F, T.I, T.W)
        while count[1, T.F] < count[0, T.F] or count[0, T.F] < planned:
            if count[0, T.F] < planned:
                self.add(0, T.F)
            self.add(0, T.I, T.W)
            self.add(1, T.F, T.I, T.W)
        for _ in range(r):
            self.add(0, T.I)
            self.add(1, T.I)
        for _ in range(p - r):
            self.add(0, T.I, T.W)
        while count[1, T.W] < count[1, T.I]:
            self.add(1, T.W)
        while count[0, T.W] < count[0, T.I]:
            self.add(0, T.W)
        return self.actions


def dualpipev(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """torch's ScheduleDualPipeV (module docstring)."""
    return [_DualPipeVRank(ranks, rank, microbatches).order() for rank in range(ranks)]


class _DualPipeVRank:
    """One rank of DualPipeV, in torch's eight steps; chunk 0 is stage r, chunk 1 2p-1-r.

    A backward is B until the rank switches to zero-bubble mode in step 6, then I, whose
    W waits in a queue for the W slots of steps 3, 7 and 8.
    """

    def __init__(self, ranks: int, rank: int, microbatches: int) -> None:
        self.ranks, self.rank, self.microbatches = ranks, rank, microbatches
        self.stage = (rank, 2 * ranks - 1 - rank)
        self.forwards = [0, 0]
        self.backwards = [0, 0]
        self.weights: list[Action] = []
        self.actions: list[AnyAction] = []

    def _forward(self, chunk: int) -> Action:
        microbatch = self.forwards[chunk]
        self.forwards[chunk] += 1
        return Action(self.stage[chunk], T.F, microbatch)

    def _backward(self, chunk: int, kind: ActionType) -> Action:
        microbatch = self.backwards[chunk]
        self.backwards[chunk] += 1
        action = Action(self.stage[chunk], kind, microbatch)
        if kind is T.I:
            self.weights.append(Action(action.stage, T.W, microbatch))
        return action

    def forward(self, chunk: int) -> None:
        self.actions.append(self._forward(chunk))

    def backward(self, chunk: int, kind: ActionType = T.B) -> None:
        self.actions.append(self._backward(chunk, kind))

    def overlapped(self, forward_chunk: int, backward_chunk: int) -> None:
        self.actions.append(overlap(self._forward(forward_chunk), self._backward(backward_chunk, T.B)))

    def weight(self) -> None:
        """The oldest pending W, if any."""
        if self.weights:
            self.actions.append(self.weights.pop(0))

    def order(self) -> list[AnyAction]:
        p, r = self.ranks, self.rank
        for _ in range((p - r - 1) * 2):  # 1: F0
            self.forward(0)
        for _ in range(r + 1):  # 2: F0 F1
            self.forward(0)
            self.forward(1)
        for _ in range(p - r - 1):  # 3: I1 W F1
            self.backward(1, T.I)
            self.weight()
            self.forward(1)
        for i in range(self.microbatches - 2 * p + r + 1):  # 4: F0B1 F1B0, overlapped
            if i == 0 and r == p - 1:
                self.forward(0)
                self.backward(1)
            else:
                self.overlapped(0, 1)
            self.overlapped(1, 0)
        for _ in range(p - r - 1):  # 5: B1 F1B0
            self.backward(1)
            self.overlapped(1, 0)
        zero_bubble = False
        steps = r + 1
        for i in range(steps):  # 6: B1 B0, the second half as I
            if i == steps // 2 and r % 2 == 1:
                zero_bubble = True
            self.backward(1, T.I if zero_bubble else T.B)
            if i == steps // 2 and r % 2 == 0:
                zero_bubble = True
            self.backward(0, T.I if zero_bubble else T.B)
        for _ in range(p - r - 1):  # 7: W B0
            self.weight()
            self.backward(0, T.I if zero_bubble else T.B)
        for _ in range(r + 1):  # 8: W
            self.weight()
        return self.actions


def zb1p_greedy(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """Greedy zero-bubble list schedule on the looped placement (see ``greedy``)."""
    placement = looped_placement(ranks, stages_per_rank)
    return greedy_zero_bubble(placement, microbatches, limit=stages_per_rank * ranks)  # type: ignore[return-value]


def zbv_greedy(ranks: int, stages_per_rank: int, microbatches: int) -> list[list[AnyAction]]:
    """Greedy zero-bubble list schedule on the V placement (see ``greedy``)."""
    return greedy_zero_bubble(v_placement(ranks), microbatches, limit=2 * ranks)  # type: ignore[return-value]


# kind name -> generator; placements and constraints are in the functions below.
SCHEDULES: dict[str, Generator] = {
    "gpipe": gpipe,
    "1f1b": one_f_one_b,
    "interleaved-1f1b": interleaved_1f1b,
    "dora-dfs": interleaved_1f1b,
    "interleaved-1f1b-tight": interleaved_1f1b_tight,
    "looped-bfs": looped_bfs,
    "zb1p": zb1p,
    "zb1p-greedy": zb1p_greedy,
    "zbv": zbv,
    "zbv-greedy": zbv_greedy,
    "dualpipev": dualpipev,
}

# The kinds whose large schedules ``generated`` writes as flat arrays, no Action made.
AS_ARRAYS = frozenset({"gpipe", "1f1b", "interleaved-1f1b", "dora-dfs", "interleaved-1f1b-tight", "looped-bfs", "zb1p"})

_ONE_STAGE = ("gpipe", "1f1b")
_V_SHAPED = ("zbv", "zbv-greedy", "dualpipev")
_ROUNDS = ("interleaved-1f1b", "dora-dfs", "zb1p")


def check_constraints(kind: str, ranks: int, stages_per_rank: int, microbatches: int) -> None:
    """Raise ``ConstraintError`` naming the broken rule, quoting the offending values."""
    if kind not in SCHEDULES:
        raise ConstraintError(f"unknown schedule kind {kind!r}; known kinds: {', '.join(SCHEDULES)}")
    for name, value in (("ranks", ranks), ("stages_per_rank", stages_per_rank), ("microbatches", microbatches)):
        if value < 1:
            raise ConstraintError(f"{kind}: {name} must be at least 1, got {name}={value}")
    if kind in _ONE_STAGE and stages_per_rank != 1:
        raise ConstraintError(f"{kind} runs one stage per rank, got stages_per_rank={stages_per_rank}")
    if kind in _V_SHAPED and stages_per_rank != 2:
        raise ConstraintError(f"{kind} places exactly two stages per rank (a V), got stages_per_rank={stages_per_rank}")
    if kind == "1f1b" and microbatches < ranks:
        raise ConstraintError(
            f"1f1b needs at least as many microbatches as stages (ranks = {ranks}), as torch's Schedule1F1B: "
            f"got microbatches={microbatches}"
        )
    if kind == "dualpipev" and microbatches < 2 * ranks:
        raise ConstraintError(
            f"dualpipev needs at least as many microbatches as stages (2 * ranks = {2 * ranks}), "
            f"got microbatches={microbatches}"
        )
    rounds = rounds_of(ranks, microbatches)
    if kind in _ROUNDS and microbatches % rounds:
        raise ConstraintError(
            f"{kind} walks microbatches in rounds = max(1, microbatches // ranks) = {rounds}, so microbatches "
            f"must be a multiple of {rounds}: got microbatches={microbatches}, ranks={ranks}"
        )
    if kind == "interleaved-1f1b-tight" and stages_per_rank > 1 and microbatches % ranks:
        raise ConstraintError(
            f"{kind} walks microbatches in rounds of one per rank, so microbatches must be a "
            f"multiple of ranks when stages_per_rank > 1: got microbatches={microbatches}, ranks={ranks}"
        )


def placement_for(kind: str, ranks: int, stages_per_rank: int) -> tuple[int, ...]:
    """``stage_to_rank`` for ``kind``: the V for the V-shaped kinds, the looped placement otherwise."""
    return v_placement(ranks) if kind in _V_SHAPED else looped_placement(ranks, stages_per_rank)


def generate(kind: str, ranks: int, stages_per_rank: int, microbatches: int) -> Schedule:
    """The compute-only schedule of ``kind``; raises ``ConstraintError`` on bad input."""
    check_constraints(kind, ranks, stages_per_rank, microbatches)
    actions: Sequence[list[AnyAction]]
    if kind in AS_ARRAYS and 2 * ranks * stages_per_rank * microbatches >= LARGE:  # an F and a B or I+W a pair
        from meshdbg.worker.pipelining.generated import KINDS  # numpy: for large schedules only

        actions = KINDS[kind](ranks, stages_per_rank, microbatches)
    else:
        with paused_gc():
            actions = SCHEDULES[kind](ranks, stages_per_rank, microbatches)
    return Schedule(
        kind=kind,
        stages_per_rank=stages_per_rank,
        microbatches=microbatches,
        stage_to_rank=placement_for(kind, ranks, stages_per_rank),
        actions=actions,
    )
