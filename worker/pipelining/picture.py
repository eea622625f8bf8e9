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


def _gantt(schedule: Schedule, result: SimResult, top: float, scale: float, name: str = "rank",
           marked: frozenset[tuple[int, int]] = frozenset()) -> list[str]:
    """A row per rank from `top`, a box per action at `scale` pixels per time unit; the
    (rank, index) pairs in `marked` outlined in red."""
    parts = []
    for rank, rank_actions in enumerate(schedule.actions):
        y = top + rank * _ROW
        parts.append(f'<text x="4" y="{y + _ROW / 2 + 2}">{name} {rank}</text>')
        for index, (action, start, end) in enumerate(zip(rank_actions, result.starts[rank], result.ends[rank])):
            box = _box(action.type, _LEFT + start * scale, y, (end - start) * scale, str(action), _label(action))
            if (rank, index) in marked:
                box = box.replace('stroke="white"', 'stroke="#d62728" stroke-width="2"')
            parts.append(box)
    return parts


def _legend(schedule: Schedule, y: float) -> list[str]:
    present = [t for t in ActionType if any(a.type is t for rank in schedule.actions for a in rank)]
    parts = []
    for index, action_type in enumerate(present):
        x = _LEFT + index * 80
        parts.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{COLOURS[action_type]}"/>')
        parts.append(f'<text x="{x + 16}" y="{y + 10}">{action_type.value}</text>')
    return parts


def to_svg(schedule: Schedule, result: SimResult, title: str | None = None) -> str:
    """An SVG Gantt chart of ``schedule`` timed by ``result``; returns the document text."""
    heading = title or (
        f"{schedule.kind}: {schedule.ranks} ranks, {schedule.stages_per_rank} stages/rank, "
        f"{schedule.microbatches} microbatches, makespan {result.makespan:g}"
    )
    legend_y = _TOP + schedule.ranks * _ROW + 10
    width = _LEFT + result.makespan * _UNIT + 20
    height = legend_y + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<text x="4" y="18" font-size="13">{escape(heading)}</text>',
        *_gantt(schedule, result, _TOP, _UNIT),
        *_legend(schedule, legend_y),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


_PLOT_WIDTH = 1100  # pixels for the longer of the two runs in a comparison


def _axis(top: float, span: float, scale: float) -> list[str]:
    """Millisecond ticks under a Gantt whose time unit is one second."""
    step = next(s for s in (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 60, 600,
                            3600, float("inf")) if span / s <= 12)
    parts = [f'<line x1="{_LEFT}" y1="{top}" x2="{_LEFT + span * scale:g}" y2="{top}" stroke="#888"/>']
    tick = 0.0
    while tick <= span * 1.0001 and step != float("inf"):
        x = _LEFT + tick * scale
        parts.append(f'<line x1="{x:g}" y1="{top}" x2="{x:g}" y2="{top + 4}" stroke="#888"/>')
        parts.append(f'<text x="{x:g}" y="{top + 15}" text-anchor="middle" fill="#555">{tick * 1e3:g} ms</text>')
        tick += step
    return parts


def to_comparison_svg(schedule: Schedule, planned: SimResult, actual: SimResult, heading: str,
                      bubbles: tuple[list[float], list[float]], notes: list[str],
                      marked: frozenset[tuple[int, int]] = frozenset()) -> str:
    """The plan and the run of one step on one time axis (seconds): a section of rows each,
    every row's bubble at its end, `marked` actions (the ones that lost most) outlined, then
    `notes`, one line each."""
    span = max(planned.makespan, actual.makespan) or 1.0
    scale = _PLOT_WIDTH / span
    section = schedule.ranks * _ROW + 24
    parts = [f'<text x="4" y="18" font-size="13">{escape(heading)}</text>']
    for index, (label, result, bubble, mark) in enumerate((("planned", planned, bubbles[1], frozenset()),
                                                           ("as run", actual, bubbles[0], marked))):
        top = _TOP + 16 + index * (section + 8)
        parts.append(f'<text x="4" y="{top - 6}" font-weight="bold">{label} ({result.makespan * 1e3:.1f} ms)</text>')
        parts += _gantt(schedule, result, top, scale, marked=mark)
        for rank, share in enumerate(bubble):
            y = top + rank * _ROW + _ROW / 2 + 2
            parts.append(f'<text x="{_LEFT + _PLOT_WIDTH + 8}" y="{y}" fill="#555">bubble {share:.2f}</text>')
        parts += _axis(top + schedule.ranks * _ROW, span, scale)
    notes_y = _TOP + 16 + 2 * (section + 8) + 10
    parts += _legend(schedule, notes_y)
    parts += [f'<text x="4" y="{notes_y + 32 + 16 * i}">{escape(note)}</text>' for i, note in enumerate(notes)]
    width = _LEFT + _PLOT_WIDTH + 90
    height = notes_y + 40 + 16 * len(notes)
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                       f'font-family="sans-serif" font-size="11">',
                       f'<rect width="{width}" height="{height}" fill="white"/>', *parts, "</svg>"]) + "\n"


def _trace_args(action: AnyAction) -> dict[str, Any]:
    """Stage and microbatch of an action; each half's text form for an overlap."""
    halves = parts(action)
    if len(halves) == 1:
        return {"stage": halves[0].stage, "microbatch": halves[0].microbatch}
    return {"forward": str(halves[0]), "backward": str(halves[1])}


def to_trace(schedule: Schedule, result: SimResult, unit_us: float = 1000.0, pid: int = 0,
             process: str = "") -> dict[str, Any]:
    """A Chrome/Perfetto trace object (``json.dump`` it); timestamps in microseconds, one time
    unit of ``result`` being ``unit_us``; its events in process ``pid`` (named ``process``)."""
    events: list[dict[str, Any]] = [
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": rank, "args": {"name": f"rank {rank}"}}
        for rank in range(schedule.ranks)
    ]
    if process:
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process}})
    for rank, rank_actions in enumerate(schedule.actions):
        for action, start, end in zip(rank_actions, result.starts[rank], result.ends[rank]):
            events.append(
                {
                    "name": str(action),
                    "cat": action.type.value,
                    "ph": "X",
                    "ts": start * unit_us,
                    "dur": (end - start) * unit_us,
                    "pid": pid,
                    "tid": rank,
                    "args": _trace_args(action),
                }
            )
    return {"traceEvents": events, "displayTimeUnit": "ms"}
