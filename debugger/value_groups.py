"""What `compare` prints: ranks grouped by equal value, the largest group first, outliers marked.

An error is a value of its own (`error: NameError: ...`), so ranks failing the same way group
together and apart from the ranks that answered. When the ranks disagree, the smallest
groups are the outliers (`rank 7: nan  <- outlier`). Shared by the CLI and the console.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from meshdbg.debugger.views import CompareView
from meshdbg.debugger.stack_tree import rank_label

ERROR_PREFIX = "error: "
OUTLIER = "  <- outlier"


def value_groups(results: Sequence[CompareView]) -> list[dict]:
    """`[{"ranks", "value", "error", "outlier"}]`, largest group first (then by first rank)."""
    by_value: dict[tuple[bool, str], list[int]] = defaultdict(list)
    for result in results:
        by_value[(not result.ok, result.error if not result.ok else result.value)].append(result.session.rank)
    ordered = sorted(by_value.items(), key=lambda item: (-len(item[1]), min(item[1])))
    sizes = [len(ranks) for _, ranks in ordered]
    smallest = min(sizes, default=0)
    disagree = len(ordered) > 1 and smallest < max(sizes)
    return [{"ranks": sorted(ranks), "value": f"{ERROR_PREFIX}{text}" if error else text, "error": error,
             "outlier": disagree and len(ranks) == smallest} for (error, text), ranks in ordered]


def value_text(groups: Sequence[dict]) -> str:
    """One line per group (`ranks 0-6,8 (8): 0.693`); a multi-line value indents under its label."""
    if not groups:
        return "no stopped rank to evaluate on"
    lines = []
    for group in groups:
        mark = OUTLIER if group["outlier"] else ""
        head, *more = group["value"].splitlines() or [""]
        lines.append(f"{rank_label(group['ranks'])}: {head}{mark}")
        lines += [f"    {line}" for line in more]
    return "\n".join(lines)
