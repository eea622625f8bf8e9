"""Text shown to people: the session table and cast output grouped by identical text.

Shared by the CLI and the console so both print the same thing.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Sequence

from debugger.control import CastResult, SessionView
from debugger.selection import describe_ranks

PDB_ERROR_PREFIX = "*** "


def where(session: SessionView) -> str:
    if not session.filename:
        return "-"
    return f"{os.path.basename(session.filename)}:{session.lineno} {session.function}"


def session_table(sessions: Sequence[SessionView]) -> str:
    """Aligned columns, one row per session, or a plain sentence when there is none."""
    if not sessions:
        return "no sessions"
    header = ("RANK", "NAME", "COORDS", "STATE", "WHERE", "THREAD", "PID", "HOST", "CONTEXT")
    rows = [header] + [(str(s.rank), s.name, s.coords_text or "-", s.state, where(s), s.thread, str(s.pid), s.hostname,
                        " ".join(f"{key}={value}" for key, value in s.context.items()))
                       for s in sessions]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def failed(result: CastResult) -> bool:
    """A cast result that did not run, or whose pdb output is an error."""
    return not result.ok or any(line.startswith(PDB_ERROR_PREFIX) for line in result.output.splitlines())


def grouped_cast_output(results: Sequence[CastResult]) -> str:
    """Identical outputs once under their rank set (`ranks 0-2,5 (4 ranks):`), sorted by rank."""
    groups: dict[str, list[int]] = defaultdict(list)
    for result in results:
        text = result.output if result.ok else f"{PDB_ERROR_PREFIX}{result.error}\n"
        groups[text].append(result.session.rank)
    blocks = []
    for text, ranks in sorted(groups.items(), key=lambda item: min(item[1])):
        label = f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {describe_ranks(ranks)} ({len(ranks)} ranks)"
        body = text.rstrip("\n") or "(no output)"
        blocks.append(f"{label}:\n" + "\n".join(f"  {line}" for line in body.splitlines()))
    return "\n".join(blocks)
