"""Pictures of a simulated schedule: an SVG Gantt chart and a Chrome/Perfetto trace.

Both take the lists and the ``SimResult`` that timed them. The SVG has a row per rank,
a box per action coloured by type and labelled with its microbatch (an overlapped F+B
with both, forward's first; the full text form is the box's tooltip); zero-length actions
(free communication) are drawn as ticks. The
trace is the JSON "Trace Event Format" that chrome://tracing and ui.perfetto.dev open,
with one thread per rank and one cost unit shown as one millisecond.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from meshdbg.worker.pipelining.ir import ActionType, AnyAction, Schedule, parts
from meshdbg.worker.pipelining.simulator import SimResult

COLOURS = {
    ActionType.F: "#4e79a7",
    ActionType.I: "#f28e2b",
    ActionType.W: "#59a14f",
    ActionType.B: "#e15759",
    ActionType.SEND_F: "#9c755f",
    ActionType.RECV_F: "#bab0ac",
    ActionType.SEND_B: "#b07aa1",
    ActionType.RECV_B: "#ff9da7",
    ActionType.OVERLAP_F_B: "#76b7b2",
}

_UNIT = 24  # pixels per cost unit
_ROW = 28  # pixels per rank row
_LEFT = 64  # room for the rank labels
_TOP = 30  # room for the title


def _label(action: AnyAction) -> str:
    """The microbatch(es) an action works on: ``3``, or ``7/3`` for an overlap."""
    return "/".join(str(half.microbatch) for half in parts(action))


def _box(action_type: ActionType, x: float, y: float, width: float, tooltip: str, label: str) -> str:
    """One action as an SVG group: a coloured rect (or a tick when width is 0) and a label."""
    colour = COLOURS[action_type]
    if width == 0:
        return f'<line x1="{x:g}" y1="{y}" x2="{x:g}" y2="{y + _ROW - 4}" stroke="{colour}"><title>{tooltip}</title></line>'
    text = (
        f'<text x="{x + width / 2:g}" y="{y + _ROW / 2 + 2}" text-anchor="middle">{label}</text>'
        if width >= 10
        else ""
    )
    return (
        f'<g><rect x="{x:g}" y="{y}" width="{width:g}" height="{_ROW - 4}" fill="{colour}" stroke="white">'
        f"<title>{tooltip}</title></rect>{text}</g>"
    )


def to_svg(schedule: Schedule, result: SimResult, title: str | None = None) -> str:
    """An SVG Gantt chart of ``schedule`` timed by ``result``; returns the document text."""
    heading = title or (
        f"{schedule.kind}: {schedule.ranks} ranks, {schedule.stages_per_rank} stages/rank, "
        f"{schedule.microbatches} microbatches, makespan {result.makespan:g}"
    )
    present = [t for t in ActionType if any(a.type is t for rank in schedule.actions for a in rank)]
    legend_y = _TOP + schedule.ranks * _ROW + 10
    width = _LEFT + result.makespan * _UNIT + 20
    height = legend_y + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<text x="4" y="18" font-size="13">{escape(heading)}</text>',
    ]
    for rank, rank_actions in enumerate(schedule.actions):
        y = _TOP + rank * _ROW
        parts.append(f'<text x="4" y="{y + _ROW / 2 + 2}">rank {rank}</text>')
        for action, start, end in zip(rank_actions, result.starts[rank], result.ends[rank]):
            parts.append(
                _box(action.type, _LEFT + start * _UNIT, y, (end - start) * _UNIT, str(action), _label(action))
            )
    for index, action_type in enumerate(present):
        x = _LEFT + index * 80
        parts.append(f'<rect x="{x}" y="{legend_y}" width="12" height="12" fill="{COLOURS[action_type]}"/>')
        parts.append(f'<text x="{x + 16}" y="{legend_y + 10}">{action_type.value}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _trace_args(action: AnyAction) -> dict[str, Any]:
    """Stage and microbatch of an action; each half's text form for an overlap."""
    halves = parts(action)
    if len(halves) == 1:
        return {"stage": halves[0].stage, "microbatch": halves[0].microbatch}
    return {"forward": str(halves[0]), "backward": str(halves[1])}


def to_trace(schedule: Schedule, result: SimResult) -> dict[str, Any]:
    """A Chrome/Perfetto trace object (``json.dump`` it); timestamps in microseconds."""
    events: list[dict[str, Any]] = [
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": rank, "args": {"name": f"rank {rank}"}}
        for rank in range(schedule.ranks)
    ]
    for rank, rank_actions in enumerate(schedule.actions):
        for action, start, end in zip(rank_actions, result.starts[rank], result.ends[rank]):
            events.append(
                {
                    "name": str(action),
                    "cat": action.type.value,
                    "ph": "X",
                    "ts": start * 1000,
                    "dur": (end - start) * 1000,
                    "pid": 0,
                    "tid": rank,
                    "args": _trace_args(action),
                }
            )
    return {"traceEvents": events, "displayTimeUnit": "ms"}
