"""The action text form: parse and format are exact inverses; anything else is rejected."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meshdbg.worker.pipelining.errors import ActionParseError
from meshdbg.worker.pipelining.ir import (Action, ActionType, format_action, overlap, parse_action,
                                         parse_action_pattern, parts)

PLAIN = [t for t in ActionType if t is not ActionType.OVERLAP_F_B]
numbers = st.integers(0, 10**6)
plain = st.builds(Action, numbers, st.sampled_from(PLAIN), numbers)
overlaps = st.builds(
    overlap,
    st.builds(Action, numbers, st.just(ActionType.F), numbers),
    st.builds(Action, numbers, st.sampled_from([ActionType.B, ActionType.I]), numbers),
)
actions = plain | overlaps


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1F0", Action(1, ActionType.F, 0)),
        ("2I13", Action(2, ActionType.I, 13)),
        ("0B3", Action(0, ActionType.B, 3)),
        ("3SEND_F12", Action(3, ActionType.SEND_F, 12)),
        ("10RECV_B250", Action(10, ActionType.RECV_B, 250)),
        ("0W0", Action(0, ActionType.W, 0)),
        ("(0F7;7B3)OVERLAP_F_B", overlap(Action(0, ActionType.F, 7), Action(7, ActionType.B, 3))),
        ("(2F0;1I4)OVERLAP_F_B", overlap(Action(2, ActionType.F, 0), Action(1, ActionType.I, 4))),
    ],
)
def test_parse_known_forms(text: str, expected: Action) -> None:
    assert parse_action(text) == expected
    assert format_action(expected) == text


@given(actions)
def test_format_then_parse_round_trips(action: Action) -> None:
    assert parse_action(format_action(action)) == action


@pytest.mark.parametrize(
    "text",
    ["", "F0", "1F", "1f0", " 1F0", "1F0 ", "1F0x", "01F0", "1F00", "1SENDF0", "1SEND_X0", "-1F0", "1X0", "1F+2", "١F0",
     "0OVERLAP_F_B0", "(0F7)OVERLAP_F_B", "(0F7;7W3)OVERLAP_F_B", "(7B3;0F7)OVERLAP_F_B", "(0F7;7B3)", "(0F7; 7B3)OVERLAP_F_B",
     "(0F7;7B3;1F0)OVERLAP_F_B"],
)
def test_parse_rejects_and_quotes_input(text: str) -> None:
    with pytest.raises(ActionParseError) as info:
        parse_action(text)
    assert repr(text) in str(info.value)


def test_comm_types_are_exactly_the_send_recv_ones() -> None:
    assert {t for t in ActionType if t.is_comm} == {
        ActionType.SEND_F,
        ActionType.RECV_F,
        ActionType.SEND_B,
        ActionType.RECV_B,
    }


def test_an_overlap_is_its_two_halves_with_the_type_in_the_middle() -> None:
    entry = parse_action("(0F7;7B3)OVERLAP_F_B")
    assert entry.type is ActionType.OVERLAP_F_B and entry[1] is ActionType.OVERLAP_F_B
    assert parts(entry) == (Action(0, ActionType.F, 7), Action(7, ActionType.B, 3))
    assert parts(Action(1, ActionType.W, 2)) == (Action(1, ActionType.W, 2),)


@pytest.mark.parametrize(("text", "matching", "other"), [
    ("3B5", "3B5", "3B4"),
    ("3F*", "3F11", "2F11"),
    ("*B5", "0B5", "0B6"),
    ("W", "7W2", "7I2"),
    ("*W*", "0W0", "0B0"),
    ("1RECV_F*", "1RECV_F3", "1RECV_B3"),
])
def test_an_action_pattern_matches_its_actions_only(text: str, matching: str, other: str) -> None:
    pattern = parse_action_pattern(text)
    assert pattern.matches(parse_action(matching)) and not pattern.matches(parse_action(other))
    assert parse_action_pattern(str(pattern)) == pattern


@pytest.mark.parametrize("text", ["", "3B", "B5", "03B5", "3X5", "*", "3B5 ", "3B5x", "(0F1;1B0)OVERLAP_F_B"])
def test_a_malformed_action_pattern_is_refused_quoting_it(text: str) -> None:
    with pytest.raises(ActionParseError, match=f"cannot parse action {re.escape(repr(text))}"):
        parse_action_pattern(text)
