"""The pure parts of `stacks` and `compare`: which frames are shown, the merged tree, the groups."""

from __future__ import annotations

import os

from meshdbg.debugger.views import SessionView
from meshdbg.debugger.answers import CompareView, RankStacksView, ThreadView
from meshdbg.debugger.stack_tree import stack_groups, stack_tree
from meshdbg.debugger.value_groups import value_groups, value_text
from meshdbg.wire.vocabulary import StackSource, State
from meshdbg.worker.stacks import user_frames

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(user_frames.__code__.co_filename)))
OWN = os.path.join(ROOT, "worker", "hook.py")
BOOT = os.path.join(ROOT, "worker", "mesh", "bootstrap.py")
PIPE = os.path.join(ROOT, "worker", "pipelining", "runtime.py")


def test_user_frames_drop_the_bootstrap_and_everything_from_pdb_inwards() -> None:
    stack = [(BOOT, "<module>", 1), ("<frozen runpy>", "_run_code", 2), ("/job/train.py", "<module>", 3),
             ("/job/train.py", "step", 4), ("/usr/lib/python3.11/bdb.py", "trace_dispatch", 5),
             ("/usr/lib/python3.11/pdb.py", "interaction", 6), (OWN, "read_remote_line", 7), ("/x/grpc/_channel.py", "f", 8)]
    assert user_frames(stack) == [("/job/train.py", "<module>", 3), ("/job/train.py", "step", 4)]
    assert user_frames([("/job/a.py", "f", 1), (PIPE, "run", 2)]) == [("/job/a.py", "f", 1), (PIPE, "run", 2)]
    assert user_frames([]) == []


def _rank(rank: int, frames: list[tuple[str, str, int]], source=StackSource.AGENT, state=State.RUNNING) -> RankStacksView:
    return RankStacksView(rank, "worker", {}, "h", 100 + rank, state, source,
                          (ThreadView("MainThread", 100 + rank, True, tuple(frames)),), "")


def test_tree_merges_prefixes_labels_branches_and_marks_the_odd_one_out() -> None:
    top = [("/job/t.py", "<module>", 1), ("/job/t.py", "main", 2)]
    ranks = [_rank(r, top + [("/job/t.py", "all_reduce", 9)]) for r in range(3)]
    ranks.append(_rank(3, top + [("/job/data.py", "load", 5)], StackSource.PY_SPY))
    ranks.append(RankStacksView(4, "worker", {}, "h", 104, State.RUNNING, StackSource.NONE, (), "no answer"))
    text = stack_tree(ranks)
    lines = text.splitlines()
    assert lines[0] == "thread MainThread: ranks 0-3 (4)"
    assert lines[1].strip().startswith("<module>") and lines[2].strip().startswith("main")
    assert "├─ all_reduce" in lines[3] and "ranks 0-2 (3)" in lines[3] and "odd" not in lines[3]
    assert "└─ load" in lines[4] and "rank 3  <- odd one out  [from py-spy]" in lines[4]
    assert text.endswith("no stack:\n  rank 4 (last known: running): no answer")
    gone = RankStacksView(5, "worker", {}, "h", 105, State.EXITED, StackSource.NONE, (), "the process has exited")
    assert stack_tree([gone]) == "no stack:\n  rank 5 (exited): the process has exited"
    groups = stack_groups(ranks)
    assert [g["ranks"] for g in groups] == [[0, 1, 2], [3], [4]]
    assert groups[1]["sources"] == {"py-spy": [3]} and groups[2]["frames"] == [] and groups[2]["error"] == "no answer"


def _value(rank: int, value: str = "", error: str = "") -> CompareView:
    session = SessionView(rank, "worker", rank, {}, "h", 1, "MainThread", 1, State.STOPPED, "breakpoint", "f", "g", 1, {})
    return CompareView(session, value, error)


def test_values_group_largest_first_errors_apart_outliers_marked() -> None:
    groups = value_groups([_value(0, "0.5"), _value(1, "nan"), _value(2, "0.5"), _value(3, error="NameError: x")])
    assert [(g["ranks"], g["outlier"]) for g in groups] == [([0, 2], False), ([1], True), ([3], False)]
    assert value_text(groups).splitlines() == ["ranks 0,2 (2): 0.5", "rank 1: nan  <- outlier",
                                               "rank 3: error: NameError: x"]
    assert not any(g["outlier"] for g in value_groups([_value(0, "1"), _value(1, "1")]))


def test_only_groups_at_most_half_the_largest_are_outliers() -> None:
    """32 ranks whose value is rank % 3 split 11, 11 and 10 ways: no group stands out (the 10 were
    marked); of 20, 10 and 2 only the smallest is."""
    def groups(*sizes: int) -> list[tuple[int, bool]]:
        values = [_value(rank, str(value)) for value, size in enumerate(sizes) for rank in range(size)]
        return [(len(g["sessions"]), g["outlier"]) for g in value_groups(values)]

    assert groups(11, 11, 10) == [(11, False), (11, False), (10, False)]
    assert groups(20, 10, 2) == [(20, False), (10, False), (2, True)]
    assert groups(2, 1) == [(2, False), (1, True)]
