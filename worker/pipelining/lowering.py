"""Lowering: make data movement explicit, and optionally merge split backwards.

``lower`` inserts a ``RECV`` right before the compute that consumes data from a stage on
another rank and a ``SEND`` right after the compute that produces data for one; stages
on the same rank hand data over in memory, so no SEND/RECV joins them. Placing each RECV
last and each SEND first keeps the compute order (and so the makespan, when
communication is free) exactly as generated; sends are buffered, so lowering cannot
introduce a deadlock.

An ``Overlap`` gets the RECVs of both its halves before it and their SENDs after it,
forward first: the runtime runs the two halves back to back.

``merge_backward`` replaces an ``I`` directly followed (on the same rank) by its own
``W`` with one ``B``, for runtimes without a split backward.

Compute actions are carried over as the same tuples; only the inserted SEND/RECV are
new, built with ``bulk.new_action`` while the collector is paused (see ``bulk``). A large
schedule generated as arrays (``generated``) is lowered and merged as arrays, the same
actions, none made.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from meshdbg.worker.pipelining.bulk import new_action, paused_gc
from meshdbg.worker.pipelining.ir import Action, ActionType, AnyAction, Overlap, Schedule, parts

if TYPE_CHECKING:
    from meshdbg.worker.pipelining.columns import ActionRows

T = ActionType


def lower(schedule: Schedule, merge: bool = False) -> Schedule:
    """A copy of ``schedule`` with SEND/RECV inserted (and I+W merged into B if ``merge``)."""
    rows = _rows(schedule)
    if rows is not None:  # generated as arrays: lowered as arrays, the same actions
        from meshdbg.worker.pipelining import generated

        return replace(schedule, actions=generated.lowered(generated.merged(rows) if merge else rows,
                                                           schedule.stage_to_rank))
    with paused_gc():
        return _lower(merge_backward(schedule) if merge else schedule)


def _rows(schedule: Schedule) -> ActionRows | None:
    """``schedule``'s actions if they are arrays (``columns.ActionRows``), else None."""
    if isinstance(schedule.actions, list):
        return None  # and numpy is not loaded
    from meshdbg.worker.pipelining.columns import ActionRows

    return schedule.actions if isinstance(schedule.actions, ActionRows) else None


def _lower(schedule: Schedule) -> Schedule:
    """``lower`` without the merge, and without touching the collector."""
    placement = schedule.stage_to_rank
    last = len(placement) - 1
    # Does stage s's forward input (from s-1) or output (to s+1) cross ranks?
    input_crosses = [s > 0 and placement[s - 1] != placement[s] for s in range(last + 1)]
    output_crosses = [s < last and placement[s + 1] != placement[s] for s in range(last + 1)]
    forward, backward, full = T.F, T.I, T.B
    recv_f, send_f, recv_b, send_b = T.RECV_F, T.SEND_F, T.RECV_B, T.SEND_B
    lowered: list[list[AnyAction]] = []
    for rank_actions in schedule.actions:
        out: list[AnyAction] = []
        append = out.append
        for action in rank_actions:
            if isinstance(action, Overlap):
                out.extend(_around_overlap(action, input_crosses, output_crosses))
                continue
            stage, action_type, microbatch = action
            if action_type is forward:
                if input_crosses[stage]:
                    append(new_action((stage, recv_f, microbatch)))
                append(action)
                if output_crosses[stage]:
                    append(new_action((stage, send_f, microbatch)))
            elif action_type is backward or action_type is full:
                if output_crosses[stage]:
                    append(new_action((stage, recv_b, microbatch)))
                append(action)
                if input_crosses[stage]:
                    append(new_action((stage, send_b, microbatch)))
            else:
                append(action)
        lowered.append(out)
    return replace(schedule, actions=lowered)


def _around_overlap(action: AnyAction, input_crosses: list[bool], output_crosses: list[bool]) -> list[AnyAction]:
    """An overlap with its halves' RECVs before it and their SENDs after it."""
    forward, backward = parts(action)
    before: list[AnyAction] = []
    after: list[AnyAction] = []
    if input_crosses[forward.stage]:
        before.append(Action(forward.stage, T.RECV_F, forward.microbatch))
    if output_crosses[backward.stage]:
        before.append(Action(backward.stage, T.RECV_B, backward.microbatch))
    if output_crosses[forward.stage]:
        after.append(Action(forward.stage, T.SEND_F, forward.microbatch))
    if input_crosses[backward.stage]:
        after.append(Action(backward.stage, T.SEND_B, backward.microbatch))
    return [*before, action, *after]


def merge_backward(schedule: Schedule) -> Schedule:
    """A copy of ``schedule`` where each I directly followed by its own W becomes one B."""
    rows = _rows(schedule)
    if rows is not None:
        from meshdbg.worker.pipelining import generated

        return replace(schedule, actions=generated.merged(rows))
    merged: list[list[AnyAction]] = []
    for rank_actions in schedule.actions:
        out: list[AnyAction] = []
        for action in rank_actions:
            previous = out[-1] if out else None
            if (
                isinstance(action, Action)
                and action.type is T.W
                and isinstance(previous, Action)
                and previous.type is T.I
                and (previous.stage, previous.microbatch) == (action.stage, action.microbatch)
            ):
                out[-1] = Action(action.stage, T.B, action.microbatch)
            else:
                out.append(action)
        merged.append(out)
    return replace(schedule, actions=merged)
