"""Large schedules generated as arrays (``generated``) against the Python generators they stand
in for: the same actions on the whole test grid, lowered and merged the same, made only when
read, and ``meshdbg schedule`` printing and writing the same bytes either way, every option."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from meshdbg.worker.pipelining import ir, schedules
from meshdbg.worker.pipelining.cli import main
from meshdbg.worker.pipelining.columns import ActionRows
from meshdbg.worker.pipelining.generated import KINDS, merged
from meshdbg.worker.pipelining.ir import LARGE, Action, Schedule, parse_action
from meshdbg.worker.pipelining.lowering import lower, merge_backward
from meshdbg.worker.pipelining.render import schedule_table
from meshdbg.worker.pipelining.schedules import AS_ARRAYS, SCHEDULES, generate, placement_for
from meshdbg.worker.pipelining.simulator import simulate

from .test_schedules import grid


def test_every_kind_written_as_arrays_has_its_generator() -> None:
    assert set(KINDS) == AS_ARRAYS and AS_ARRAYS < set(SCHEDULES)


@pytest.mark.parametrize("kind", sorted(AS_ARRAYS))
def test_the_arrays_are_the_generators_lists_on_the_grid(kind: str) -> None:
    """p 1-8, v 1-4, m 1-4p wherever the kind accepts them: the same actions, to the type."""
    for p, v, m in grid(kind):
        rows, lists = KINDS[kind](p, v, m), SCHEDULES[kind](p, v, m)
        assert list(rows) == lists, (kind, p, v, m)
        assert {type(action) for rank in rows for action in rank} <= {Action}
    assert len(grid(kind)) >= 40


@pytest.mark.parametrize("kind", sorted(AS_ARRAYS))
def test_lowering_and_merging_the_arrays_is_lowering_and_merging_the_lists(kind: str) -> None:
    for p, v, m in grid(kind):
        lists, rows = (Schedule(kind, v, m, placement_for(kind, p, v), actions)
                       for actions in (SCHEDULES[kind](p, v, m), KINDS[kind](p, v, m)))
        for merge in (False, True):
            lowered = lower(rows, merge=merge).actions
            assert isinstance(lowered, ActionRows) and list(lowered) == lower(lists, merge=merge).actions, (kind, p, v, m)
        assert list(merge_backward(rows).actions) == merge_backward(lists).actions, (kind, p, v, m)


def test_merging_arrays_pairs_an_i_with_its_w_on_its_own_rank_only() -> None:
    lists = [[parse_action(text) for text in rank.split()] for rank in ("0F0 0I0", "0W0 0F1 0I1 0W1 0W1", "0I2 1W2")]
    rows = ActionRows.of(lists)
    assert rows is not None
    assert [list(map(str, rank)) for rank in merged(rows)] == [["0F0", "0I0"], ["0W0", "0F1", "0B1", "0W1"], ["0I2", "1W2"]]


def test_a_large_schedule_is_arrays_until_a_list_is_read() -> None:
    schedule = generate("zb1p", 8, 4, 320)  # 30,720 actions
    rows = schedule.actions
    assert isinstance(rows, ActionRows) and schedule.large and rows.total == 30_720
    assert schedule.columns is not None and schedule.columns.code is rows.code  # the arrays, not a copy
    simulate(schedule)
    schedule_table(schedule)
    simulate(lower(schedule, merge=True))
    assert rows._rows == [None] * 8  # run, table and lowering made no Action
    assert rows[3] == SCHEDULES["zb1p"](8, 4, 320)[3]
    assert [row is not None for row in rows._rows] == [i == 3 for i in range(8)]
    assert rows == SCHEDULES["zb1p"](8, 4, 320)


def sizes(kind: str) -> list[str]:
    """--ranks, --stages-per-rank, --microbatches of a schedule just past LARGE actions."""
    p, v, m = {"gpipe": (8, 1, 1280), "1f1b": (8, 1, 1280)}.get(kind, (8, 4, 320))
    return ["--ranks", str(p), "--stages-per-rank", str(v), "--microbatches", str(m)]


OPTIONS = [[], ["--json"], ["--lowered", "--costs", "F=1,B=2.5,send=0.5,recv=0.25"], ["--merge-backward", "--json"],
           ["--costs", "F=0.1,B=0.2"]]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", sorted(AS_ARRAYS))
def test_meshdbg_schedule_prints_the_same_from_arrays_as_from_lists(kind: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Table, --json, the summary lines and --csv, each option, against the Python path alone
    (lists, event loop, ``format_table``, ``str`` of each action), as for a small schedule."""
    def run(argv: list[str], numpy: bool) -> tuple[str, str]:
        monkeypatch.setattr(ir, "LARGE", LARGE if numpy else sys.maxsize)
        monkeypatch.setattr(schedules, "AS_ARRAYS", AS_ARRAYS if numpy else frozenset())
        csv = tmp_path / "out.csv"
        assert main(["--kind", kind, *sizes(kind), *argv, "--csv", str(csv)]) == 0
        return capsys.readouterr().out, csv.read_text(encoding="utf-8")

    for argv in OPTIONS:
        with_numpy, python_alone = run(argv, numpy=True), run(argv, numpy=False)
        assert with_numpy == python_alone, (kind, argv)
        assert len(with_numpy[0]) > 100_000
