"""What `stacks` prints: a merged prefix tree of every rank's stack (text), or groups (JSON).

The tree is STAT's picture: for each thread name, the stacks of all ranks merged frame by frame
from the outermost, each branch labelled with the ranks that share it, so 30 ranks in
`all_reduce` and 2 in the data loader are two branches and the 2 are marked as the odd ones
out. A chain of frames shared by the same ranks prints as one column (no indent); only a
branch point indents. Shared by the CLI and the console.
"""

from __future__ import annotations

import os
import sysconfig
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from meshdbg.debugger.answers import FrameKey, RankStacksView
from meshdbg.debugger.selection import describe_ranks, ranks_text
from meshdbg.wire.vocabulary import StackSource, State

ODD = "  <- odd one out"
_LIBRARY_ROOTS = tuple(sorted({p + os.sep for p in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"])},
                              key=len, reverse=True))


def rank_label(ranks: Sequence[int]) -> str:
    """`rank 3`, or `ranks 0-29 (30)`."""
    return ranks_text(ranks, count="")


def short_path(filename: str) -> str:
    """A frame's file as a person reads it: relative to the current folder or to site-packages
    or the standard library, else as given."""
    if filename.startswith("<"):
        return filename
    cwd = os.getcwd() + os.sep
    for root in (cwd, *_LIBRARY_ROOTS):
        if filename.startswith(root):
            return filename[len(root):]
    return filename


# ---- JSON -----------------------------------------------------------------------------


def stack_groups(ranks: Sequence[RankStacksView]) -> list[dict]:
    """One group per distinct (thread, stack), ranks sorted; main threads first, then larger
    groups first; then one group per distinct reason a rank gave no stack (`frames` empty)."""
    groups: dict[tuple[str, tuple[FrameKey, ...]], list[tuple[RankStacksView, bool]]] = defaultdict(list)
    for view in ranks:
        for thread in view.threads:
            groups[(thread.name, thread.frames)].append((view, thread.main))
    keyed = [(any(main for _, main in members), _group(name, frames, members))
             for (name, frames), members in groups.items()]
    keyed.sort(key=lambda item: (not item[0], -len(item[1]["ranks"]), item[1]["ranks"]))
    found = [group for _, group in keyed]
    for (state, error), members in _silent(ranks):
        found.append({"ranks": sorted(members), "thread": "", "frames": [], "sources": {StackSource.NONE: sorted(members)},
                      "states": {state: sorted(members)}, "error": error})
    return found


def _silent(ranks: Sequence[RankStacksView]) -> list[tuple[tuple[State, str], list[int]]]:
    """The ranks that gave no stack, grouped by their last known state and why, by first rank."""
    by_reason: dict[tuple[State, str], list[int]] = defaultdict(list)
    for view in ranks:
        if view.source is StackSource.NONE:
            by_reason[(view.state, view.error)].append(view.rank)
    return sorted(by_reason.items(), key=lambda item: min(item[1]))


def _group(name: str, frames: tuple[FrameKey, ...], members: list[tuple[RankStacksView, bool]]) -> dict:
    sources: dict[str, list[int]] = defaultdict(list)
    states: dict[str, list[int]] = defaultdict(list)
    for view, _ in members:
        sources[view.source].append(view.rank)
        states[view.state].append(view.rank)
    return {"ranks": sorted(view.rank for view, _ in members), "thread": name,
            "frames": [{"filename": f, "function": fn, "lineno": line} for f, fn, line in frames],
            "sources": dict(sources), "states": dict(states)}


# ---- the tree -------------------------------------------------------------------------


@dataclass
class _Node:
    frame: FrameKey | None
    ranks: set[int] = field(default_factory=set)
    children: dict[FrameKey, "_Node"] = field(default_factory=dict)
    ends: dict[int, RankStacksView] = field(default_factory=dict)  # ranks whose stack ends here

    def add(self, frames: tuple[FrameKey, ...], view: RankStacksView) -> None:
        node = self
        node.ranks.add(view.rank)
        for frame in frames:
            node = node.children.setdefault(frame, _Node(frame))
            node.ranks.add(view.rank)
        node.ends[view.rank] = view


def stack_tree(ranks: Sequence[RankStacksView]) -> str:
    """The merged tree of every thread name (main thread first), then the ranks without stacks."""
    roots: dict[str, _Node] = {}
    main_names: set[str] = set()
    for view in ranks:
        for thread in view.threads:
            roots.setdefault(thread.name, _Node(None)).add(thread.frames, view)
            if thread.main:
                main_names.add(thread.name)
    blocks = []
    for name in sorted(roots, key=lambda n: (n not in main_names, n)):
        root = roots[name]
        lines = [f"thread {name}: {rank_label(sorted(root.ranks))}"]
        _render(root, root.ranks, "  ", lines)
        blocks.append("\n".join(lines))
    silent = _silent(ranks)
    if silent:  # (an exited rank is no silent one: "not answering" said so of ranks that had ended)
        lines = ["no stack:"]
        for (state, error), members in silent:
            known = str(state) if state is State.EXITED else f"last known: {state}"
            lines.append(f"  {rank_label(members)} ({known}): {error}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "no stacks"


def _render(node: _Node, shown: set[int], indent: str, lines: list[str]) -> None:
    """The children of `node`: one continues the column, several branch (`├─`, `└─`)."""
    children = list(node.children.values())
    if node.ends and children:
        lines.append(f"{indent}{rank_label(sorted(node.ends))} stop here{_notes(node)}")
    if len(children) == 1:
        _line(children[0], shown, indent, indent, "", lines)
        return
    smallest, largest = (min(len(c.ranks) for c in children), max(len(c.ranks) for c in children)) if children else (0, 0)
    ordered = sorted(children, key=lambda c: (-len(c.ranks), min(c.ranks)))
    for i, child in enumerate(ordered):
        last = i == len(ordered) - 1
        odd = ODD if len(child.ranks) == smallest < largest else ""
        _line(child, shown, indent + ("└─ " if last else "├─ "), indent + ("   " if last else "│  "), odd, lines)


def _line(node: _Node, shown: set[int], first: str, rest: str, odd: str, lines: list[str]) -> None:
    """One frame, labelled with its ranks where they differ from the line above, then its children."""
    assert node.frame is not None  # only the root has no frame, and it has no line
    filename, function, lineno = node.frame
    text = f"{first}{function}  {short_path(filename)}:{lineno}"
    label = f"    {rank_label(sorted(node.ranks))}" if node.ranks != shown else ""
    notes = _notes(node) if not node.children else ""
    lines.append(f"{text}{label}{odd}{notes}")
    _render(node, node.ranks, rest, lines)


def _notes(node: _Node) -> str:
    """How the ranks ending here differ from a plain running rank sampled by its agent."""
    notes = []
    for what, ranks in _unusual(node.ends.values()).items():
        notes.append(what if set(ranks) == set(node.ends) else f"{what}: {describe_ranks(ranks)}")
    return f"  [{'; '.join(notes)}]" if notes else ""


def _unusual(views: Iterable[RankStacksView]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = defaultdict(list)
    for view in views:
        if view.state is not State.RUNNING:
            found[f"{view.state} in pdb" if view.state is State.STOPPED else str(view.state)].append(view.rank)
        if view.source is not StackSource.AGENT:
            found[f"from {view.source}"].append(view.rank)
    return found
