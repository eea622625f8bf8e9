"""What `compare` prints: ranks grouped by equal value, the largest group first, outliers marked.

Every stopped session of a selected rank is evaluated: a rank stopped in several threads
answers once per thread, and its groups name the thread (`rank 0 (sidekick): 7`). Errors are
grouped apart, after the values (`error: NameError: ...`), and are never outliers: when the
values disagree, the smallest value groups are (`rank 7: nan  <- outlier`), if they are at most
half the largest (ranks split 11, 11 and 10 ways have no outlier: they were all marked). The selected
ranks that were not evaluated (running, exited) are named on a last line, so a rank missing
from the groups is never silently missing. Shared by the CLI and the console.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from meshdbg.debugger.format import session_tags, sessions_label
from meshdbg.debugger.selection import parse_selection, ranks_text
from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.answers import CompareView
from meshdbg.wire.vocabulary import State

ERROR_PREFIX = "error: "
OUTLIER = "  <- outlier"


def evaluated(results: Sequence[CompareView]) -> list[CompareView]:
    """The results of sessions that were stopped at their prompt (a session still running, as
    one just interrupted, could not evaluate: its rank is left out, not an error)."""
    return [r for r in results if r.ok or r.session.state is State.STOPPED]


def value_groups(results: Sequence[CompareView]) -> list[dict]:
    """`[{"ranks", "value", "error", "outlier", "sessions": [{"rank", "thread", "pid", "id"}]}]`:
    value groups largest first (then by first rank), then error groups."""
    results = evaluated(results)
    by_value: dict[tuple[bool, str], list[SessionView]] = defaultdict(list)
    for result in results:
        by_value[(not result.ok, result.error if not result.ok else result.value)].append(result.session)
    ordered = sorted(by_value.items(), key=lambda item: (item[0][0], -len(item[1]), min(s.rank for s in item[1])))
    sizes = [len(sessions) for (error, _), sessions in ordered if not error]
    outlying = len(sizes) > 1 and 2 * min(sizes) <= max(sizes)  # the smallest groups stand out
    tags = session_tags(r.session for r in results)
    return [{"ranks": sorted({s.rank for s in sessions}), "value": f"{ERROR_PREFIX}{text}" if error else text,
             "error": error, "outlier": outlying and not error and len(sessions) == min(sizes),
             "sessions": [{"rank": s.rank, "thread": s.thread, "pid": s.pid, "id": s.id} for s in sessions],
             "label": sessions_label(sessions, tags, count="")}
            for (error, text), sessions in ordered]


def left_out(selection: str, workers: Sequence[WorkerView], results: Sequence[CompareView]) -> dict[State, list[int]]:
    """The selected ranks (of the workers the server knows, and of the sessions that were still
    running) that have no result, by state: running ones (no stopped session), exited ones."""
    chosen = parse_selection(selection)
    answered = {(r.session.name, r.session.rank) for r in evaluated(results)}
    missing: dict[State, list[int]] = defaultdict(list)
    for result in results:
        key = (result.session.name, result.session.rank)
        if key not in answered and result.session.rank not in missing[State.RUNNING]:
            answered.add(key)
            missing[State.RUNNING].append(result.session.rank)
    for worker in workers:
        if (worker.name, worker.rank) not in answered and chosen.matches(worker.rank, worker.coords):
            missing[State.EXITED if worker.state is State.EXITED else State.RUNNING].append(worker.rank)
    return {state: sorted(ranks) for state, ranks in missing.items() if ranks}


def value_text(groups: Sequence[dict], missing: dict[State, list[int]] | None = None) -> str:
    """One line per group (`ranks 0-6,8 (8): 0.693`); a multi-line value indents under its label;
    a last line names the ranks left out (`not evaluated: ranks 2-3 (running)`)."""
    lines = []
    for group in groups:
        mark = OUTLIER if group["outlier"] else ""
        head, *more = group["value"].splitlines() or [""]
        lines.append(f"{group['label']}: {head}{mark}")
        lines += [f"    {line}" for line in more]
    skipped = [f"{ranks_text(ranks)} ({state})" for state, ranks in sorted((missing or {}).items()) if ranks]
    if skipped:
        lines.append(f"not evaluated: {', '.join(skipped)}")
    return "\n".join(lines) if lines else "no stopped rank to evaluate on"
