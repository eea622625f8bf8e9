"""Rank selection parsing and matching (pure logic)."""

from __future__ import annotations

import pytest

from meshdbg.wire.errors import SelectionError, TargetError
from meshdbg.debugger.selection import AttachTarget, describe_ranks, parse_attach_target, parse_selection

MESH = [(rank, {"hosts": rank // 4, "gpus": rank % 4}) for rank in range(12)]


def chosen(text: str) -> list[int]:
    selection = parse_selection(text)
    return [rank for rank, coords in MESH if selection.matches(rank, coords)]


@pytest.mark.parametrize("text, ranks", [
    ("ranks(3)", [3]),
    ("ranks(1,4,6)", [1, 4, 6]),
    ("ranks(2:10:2)", [2, 4, 6, 8]),
    ("ranks(:)", list(range(12))),
    ("ranks()", list(range(12))),
    ("ranks(8:)", [8, 9, 10, 11]),
    ("ranks(::5)", [0, 5, 10]),
    ("ranks(hosts=1, gpus=0:2)", [4, 5]),
    ("ranks(gpus=(0,3))", [0, 3, 4, 7, 8, 11]),
    ("ranks(0:6, hosts=1)", [4, 5]),
    ("all", list(range(12))),
    ("*", list(range(12))),
    ("3", [3]),
    ("0,3-5", [0, 3, 4, 5]),
    (" 10 - 11 ", [10, 11]),
])
def test_selections_choose_the_documented_ranks(text: str, ranks: list[int]) -> None:
    assert chosen(text) == ranks


def test_unknown_dimension_matches_nothing_and_is_reported() -> None:
    selection = parse_selection("ranks(gpu=1)")
    assert not any(selection.matches(rank, coords) for rank, coords in MESH)
    assert selection.unknown_dims({"hosts", "gpus"}) == ["gpu"]


@pytest.mark.parametrize("text, position, problem", [
    ("ranks(1,", 8, "expected an integer"),
    ("ranks(hosts=1, gpus=x)", 20, "expected an integer"),
    ("ranks(1:4:0)", 10, "step must be positive"),
    ("ranks(hosts=1, 2)", 15, "before dim="),
    ("ranks(hosts=1, hosts=2)", 15, "given twice"),
    ("ranks(1) extra", 9, "unexpected text"),
    ("3-1", 2, ">= 3"),
    ("", 0, "empty selection"),
    ("ranks[1]", 5, "unexpected character '['"),
    ("everything", 0, "expected `all`"),
    ("ranks(gpus=(0,", 14, "expected an integer"),
    ("ranks(pp=1:3", 12, "expected ')' to close the parenthesis"),
    ("ranks(gpus=(0,1", 15, "expected ')' to close the parenthesis"),
    ("ranks(pp=1 gpus=0)", 11, "expected ',' or ')'"),
    ("'ranks(hosts=1)'", 0, "a selection takes no quotes here (they are the shell's): type it bare"),
])
def test_bad_selections_point_at_the_problem(text: str, position: int, problem: str) -> None:
    with pytest.raises(SelectionError) as caught:
        parse_selection(text)
    assert caught.value.position == position
    assert problem in caught.value.problem
    caret_line = str(caught.value).splitlines()[-1]
    assert caret_line.index("^") - 2 == position


def test_describe_ranks_compacts_runs() -> None:
    assert describe_ranks([5, 0, 1, 2, 2, 7, 8]) == "0-2,5,7-8"
    assert describe_ranks([]) == ""


@pytest.mark.parametrize("text, target", [
    ("2", AttachTarget(rank=2)),
    (" trainer 2 ", AttachTarget(rank=2, name="trainer")),
    ("#12", AttachTarget(session_id=12)),
])
def test_attach_targets(text: str, target: AttachTarget) -> None:
    assert parse_attach_target(text) == target


@pytest.mark.parametrize("text, position", [
    ("", 0), ("x", 0), ("²", 0), ("#²", 0), ("#", 0), ("99999999999", 0), ("a b 2", 4), ("trainer x", 8),
])
def test_bad_attach_targets_point_at_the_word(text: str, position: int) -> None:
    with pytest.raises(TargetError) as caught:
        parse_attach_target(text)
    assert caught.value.position == position
