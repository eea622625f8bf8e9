"""Text views of per-rank action lists: an aligned table, and CSV in torch's layout.

The table puts one column per rank and one row per step (the k-th action of every rank);
a rank that has run out of actions shows an empty cell.

The CSV is the layout torch's and Monarch's ``_dump_csv``/``_load_csv`` use: one row per
rank, one cell per action in text form (``0F7``, ``3SEND_B2``, ``(0F7;7B3)OVERLAP_F_B``),
an empty cell for an idle step. ``load_csv`` reads what either wrote, ``compute_only`` or
``compute_comms``, and the column layout meshdbg wrote before (a ``rank 0,rank 1,...``
header, one row per step). What it takes from each dialect:

* torch: ``UNSHARD``, ``RESHARD`` and ``REDUCE_GRAD`` (FSDP and gradient reduction, not
  pipeline order) are skipped;
* Monarch: ``BW`` is a full backward (B), a ``B`` whose stage and microbatch also have a
  ``W`` and no ``I`` is Monarch's input backward (I), a ``_rs`` suffix is dropped, and a
  batched ``0SEND_F3_1RECV_B2`` is its two actions.

Neither view cares whether the lists make a valid schedule, so they can show a broken one.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from itertools import repeat

from meshdbg.worker.pipelining.errors import ActionParseError, ScheduleError
from meshdbg.worker.pipelining.ir import (ACTION_TEXT, Action, ActionType, AnyAction, Schedule, has_overlaps,
                                          parse_action)

_HEADER_RE = re.compile(r"rank (0|[1-9][0-9]*)")
_SKIPPED_RE = re.compile(r"[0-9]+(UNSHARD|RESHARD|REDUCE_GRAD)")
_MONARCH_BATCHED_RE = re.compile(r"([0-9]+(?:SEND_F|SEND_B)[0-9]+)_([0-9]+(?:RECV_B|RECV_F)[0-9]+)")
_MONARCH_FULL_RE = re.compile(r"([0-9]+)BW([0-9]+)")


def format_table(actions: Sequence[list[AnyAction]]) -> str:
    """An aligned text table: a ``step`` column, then ``rank 0``, ``rank 1``, ...

    Built column by column (a rank's cells, its width, its padding), so the half million
    cells of a large schedule pass through C loops (``map``, ``str.ljust``, ``zip``), not
    one Python expression each (issue 22: the table was half of ``meshdbg schedule``)."""
    steps = max((len(rank_actions) for rank_actions in actions), default=0)
    header = ["step"] + [f"rank {rank}" for rank in range(len(actions))]
    text = str if has_overlaps(actions) else ACTION_TEXT.__mod__  # plain actions: no __str__ call each
    columns = [list(map(str, range(steps)))] + [list(map(text, rank_actions)) for rank_actions in actions]
    padded = []
    for title, cells in zip(header, columns):
        width = max(len(title), max(map(len, cells), default=0))
        padded.append(list(map(str.ljust, [title, *cells, *[""] * (steps - len(cells))], repeat(width))))
    return "\n".join("  ".join(row).rstrip() for row in zip(*padded))


def schedule_table(schedule: Schedule) -> str:
    """``format_table`` of ``schedule``'s lists; a large one's from its ``columns`` (numpy):
    the same text in a third of the time (issue 22)."""
    columns = schedule.columns if schedule.large else None
    return format_table(schedule.actions) if columns is None else columns.table()


def action_texts(schedule: Schedule) -> list[list[str]]:
    """Each rank's actions in text form; a large schedule's from its ``columns``, no
    ``Action`` made (as ``--json`` lists them)."""
    columns = schedule.columns if schedule.large else None
    if columns is None:
        return [list(map(str, rank_actions)) for rank_actions in schedule.actions]
    return columns.texts()


def dump_csv(rows: list[list[AnyAction | None]]) -> str:
    """CSV text in torch's layout: row r is rank r's actions, an empty cell for each None
    (an idle step, see ``simulator.step_grid``); see ``load_csv``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(["" if action is None else str(action) for action in row] for row in rows)
    return out.getvalue()


def load_csv(text: str) -> list[list[AnyAction]]:
    """Per-rank lists from CSV written by meshdbg, torch or Monarch (module docstring).

    Errors name the rank and quote the cell.
    """
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ScheduleError("schedule CSV is empty: expected one row per rank, one cell per action")
    if rows[0] and _HEADER_RE.fullmatch(rows[0][0]):
        return _load_columns(rows)
    actions: list[list[AnyAction]] = [[action for cell in row for action in _parse_cell(cell.strip(), rank)]
                                      for rank, row in enumerate(rows)]
    return _monarch_input_backwards(actions)


def _parse_cell(cell: str, rank: int) -> list[Action]:
    """The actions of one cell: none for an idle step or a skipped marker, two for a batched pair."""
    if not cell or _SKIPPED_RE.fullmatch(cell):
        return []
    cell = cell.removesuffix("_rs")
    if batched := _MONARCH_BATCHED_RE.fullmatch(cell):
        return [_parse(text, rank) for text in batched.groups()]
    if full := _MONARCH_FULL_RE.fullmatch(cell):
        cell = f"{full[1]}B{full[2]}"
    return [_parse(cell, rank)]


def _parse(text: str, rank: int) -> Action:
    try:
        return parse_action(text)  # type: ignore[return-value]
    except ActionParseError as exc:
        raise ActionParseError(f"schedule CSV rank {rank}: {exc}") from None


def _monarch_input_backwards(actions: list[list[AnyAction]]) -> list[list[AnyAction]]:
    """Monarch's ``B`` with a ``W`` and no ``I`` of its own is an input backward: make it ``I``."""
    kinds: dict[tuple[int, int], set[ActionType]] = {}
    for rank_actions in actions:
        for action in rank_actions:
            if action.type in (ActionType.B, ActionType.I, ActionType.W):
                kinds.setdefault((action.stage, action.microbatch), set()).add(action.type)  # type: ignore[union-attr]
    monarch = {key for key, seen in kinds.items() if seen == {ActionType.B, ActionType.W}}
    if not monarch:
        return actions
    return [
        [
            Action(a.stage, ActionType.I, a.microbatch)  # type: ignore[union-attr]
            if a.type is ActionType.B and (a.stage, a.microbatch) in monarch  # type: ignore[union-attr]
            else a
            for a in rank_actions
        ]
        for rank_actions in actions
    ]


def _load_columns(rows: list[list[str]]) -> list[list[AnyAction]]:
    """meshdbg's earlier layout: a ``rank 0,rank 1,...`` header, then one row per step."""
    header = rows[0]
    expected = [f"rank {rank}" for rank in range(len(header))]
    if header != expected:
        raise ScheduleError(f"schedule CSV header {','.join(header)!r} is not {','.join(expected)!r}")
    actions: list[list[AnyAction]] = [[] for _ in header]
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ScheduleError(f"schedule CSV line {line} {','.join(row)!r} has {len(row)} cells, expected {len(header)}")
        for rank, cell in enumerate(row):
            if not cell:
                continue
            if len(actions[rank]) != line - 2:
                raise ScheduleError(f"schedule CSV line {line}: rank {rank} has {cell!r} after an empty cell")
            actions[rank].append(parse_action(cell))
    return actions
