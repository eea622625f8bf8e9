"""Zero-bubble list scheduling: build per-rank orders by simulating ranks that never idle.

Used by meshdbg's own zero-bubble kinds (``zb1p-greedy``, ``zbv-greedy``; ``zb1p`` and ``zbv``
are torch's orders). Every rank, whenever it is free, runs
the first ready action in this order of preference:

1. ``I`` (backward for inputs), deepest local stage first: it is on the critical path,
   because the previous stage waits for the gradient it produces;
2. ``F``, deepest local stage first, so microbatches drain towards the loss early;
3. ``W`` (backward for weights), oldest first: nothing waits for it, so it is deferred
   into what would otherwise be a bubble.

Only ready actions are chosen, so the result is deadlock-free by construction. Memory is
steered by ``limit``: a rank admits a new microbatch (an ``F`` on its first local stage)
only while it holds fewer than ``limit`` activations (an ``F`` takes one until its ``W``).
Forwards on later local stages are never held back (so the peak may pass ``limit`` by a
few), which keeps the oldest unfinished microbatch moving: the bound cannot deadlock.

Decisions use unit costs (F = I = W = 1), the regime for which zero-bubble schedules
are designed; the simulator can time the result with any costs.
"""

from __future__ import annotations

import heapq
from collections import deque

from meshdbg.worker.pipelining.ir import Action, ActionType

_UNSET = float("inf")


def greedy_zero_bubble(stage_to_rank: tuple[int, ...], microbatches: int, limit: int) -> list[list[Action]]:
    """Per-rank F/I/W orders for ``stage_to_rank``; ``limit`` (>= 1) steers admissions."""
    ranks = max(stage_to_rank, default=-1) + 1
    num_stages, last = len(stage_to_rank), len(stage_to_rank) - 1
    local = [sorted((s for s in range(num_stages) if stage_to_rank[s] == r), reverse=True) for r in range(ranks)]
    forward_end = [_UNSET] * (num_stages * microbatches)
    input_end = [_UNSET] * (num_stages * microbatches)
    next_forward = [0] * num_stages
    next_input = [0] * num_stages
    pending_weights: list[deque[tuple[int, int]]] = [deque() for _ in range(ranks)]
    held = [0] * ranks
    remaining = [3 * microbatches * len(stages) for stages in local]
    orders: list[list[Action]] = [[] for _ in range(ranks)]
    free_at = [(0.0, r) for r in range(ranks) if remaining[r]]
    finish_times: list[float] = []  # ends of started actions: when readiness can change
    parked: list[int] = []  # ranks with nothing ready and no action left running

    def ready_input(rank: int, now: float) -> Action | None:
        for stage in local[rank]:
            mb = next_input[stage]
            if mb < microbatches and forward_end[stage * microbatches + mb] <= now and (
                stage == last or input_end[(stage + 1) * microbatches + mb] <= now
            ):
                next_input[stage] += 1
                input_end[stage * microbatches + mb] = now + 1
                pending_weights[rank].append((stage, mb))
                return Action(stage, ActionType.I, mb)
        return None

    def ready_forward(rank: int, now: float) -> Action | None:
        entry = local[rank][-1]
        for stage in local[rank]:
            mb = next_forward[stage]
            if mb < microbatches and (stage == 0 or forward_end[(stage - 1) * microbatches + mb] <= now):
                if stage == entry and held[rank] >= limit:
                    continue
                next_forward[stage] += 1
                forward_end[stage * microbatches + mb] = now + 1
                held[rank] += 1
                return Action(stage, ActionType.F, mb)
        return None

    def ready_weight(rank: int) -> Action | None:
        if not pending_weights[rank]:
            return None
        stage, mb = pending_weights[rank].popleft()
        held[rank] -= 1
        return Action(stage, ActionType.W, mb)

    while free_at:
        now, rank = heapq.heappop(free_at)
        action = ready_input(rank, now) or ready_forward(rank, now) or ready_weight(rank)
        if action is None:
            while finish_times and finish_times[0] <= now:
                heapq.heappop(finish_times)
            if finish_times:
                heapq.heappush(free_at, (finish_times[0], rank))
            else:
                parked.append(rank)
            continue
        orders[rank].append(action)
        remaining[rank] -= 1
        heapq.heappush(finish_times, now + 1)
        if remaining[rank]:
            heapq.heappush(free_at, (now + 1, rank))
        for waiter in parked:
            heapq.heappush(free_at, (now + 1, waiter))
        parked.clear()
    if parked:
        raise RuntimeError(f"greedy scheduler stalled with ranks {parked} waiting (a bug)")
    return orders
