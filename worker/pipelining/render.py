"""Text views of per-rank action lists: an aligned table and a CSV that round-trips.

Both put one column per rank and one row per step (the k-th action of every rank); a
rank that has run out of actions shows an empty cell. Neither cares whether the lists
make a valid schedule, so they can show a broken one too.
"""

from __future__ import annotations

import csv
import io
import re

from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.ir import Action, parse_action

_HEADER_RE = re.compile(r"rank (0|[1-9][0-9]*)")


def _rows(actions: list[list[Action]]) -> list[list[str]]:
    """Cells row by row: the text form, or "" where a rank has no action at that step."""
    steps = max((len(rank_actions) for rank_actions in actions), default=0)
    return [
        [str(rank_actions[step]) if step < len(rank_actions) else "" for rank_actions in actions]
        for step in range(steps)
    ]


def format_table(actions: list[list[Action]]) -> str:
    """An aligned text table: a ``step`` column, then ``rank 0``, ``rank 1``, ..."""
    header = ["step"] + [f"rank {rank}" for rank in range(len(actions))]
    body = [[str(step)] + row for step, row in enumerate(_rows(actions))]
    widths = [max(len(row[col]) for row in [header, *body]) for col in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *body]
    )


def dump_csv(actions: list[list[Action]]) -> str:
    """CSV text: header ``rank 0,rank 1,...``, then one row per step; see ``load_csv``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([f"rank {rank}" for rank in range(len(actions))])
    writer.writerows(_rows(actions))
    return out.getvalue()


def load_csv(text: str) -> list[list[Action]]:
    """Parse ``dump_csv`` output back into per-rank lists; errors quote the bad cell or row."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise ScheduleError("schedule CSV is empty: expected a header 'rank 0,rank 1,...'")
    header = rows[0]
    expected = [f"rank {rank}" for rank in range(len(header))]
    if header != expected:
        raise ScheduleError(f"schedule CSV header {','.join(header)!r} is not {','.join(expected)!r}")
    actions: list[list[Action]] = [[] for _ in header]
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
