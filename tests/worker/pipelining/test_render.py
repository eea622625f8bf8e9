"""Table and CSV views: never crash, and the CSV round-trips exactly."""

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meshdbg.worker.pipelining.errors import ActionParseError, ScheduleError
from meshdbg.worker.pipelining.ir import Action, ActionType, overlap, parse_action
from meshdbg.worker.pipelining.lowering import lower
from meshdbg.worker.pipelining.render import dump_csv, format_table, load_csv
from meshdbg.worker.pipelining.schedules import generate

T = ActionType
# Any action but a B that has a W of its own (load_csv reads that as Monarch's input backward).
stages, microbatches = st.integers(0, 99), st.integers(0, 999)
plain = st.builds(Action, stages, st.sampled_from([t for t in T if t not in (T.OVERLAP_F_B, T.W)]), microbatches)
overlaps = st.builds(overlap, st.builds(Action, stages, st.just(T.F), microbatches),
                     st.builds(Action, stages, st.sampled_from([T.B, T.I]), microbatches))
action_lists = st.lists(st.lists(plain | overlaps, max_size=6), min_size=1, max_size=5)


@given(action_lists)
def test_csv_round_trips(actions: list[list[Action]]) -> None:
    text = dump_csv(actions)
    assert load_csv(text) == actions
    assert dump_csv(load_csv(text)) == text


@given(action_lists, st.data())
def test_idle_steps_are_empty_cells_that_load_skips(actions: list[list[Action]], data: st.DataObject) -> None:
    rows = [data.draw(st.permutations(rank + [None] * data.draw(st.integers(0, 3)))) for rank in actions]
    text = dump_csv(rows)
    cells = list(csv.reader(io.StringIO(text)))
    assert [[cell or None for cell in line] for line in cells] == [[a and str(a) for a in row] for row in rows]
    assert load_csv(text) == [[a for a in row if a is not None] for row in rows]


def test_csv_is_torchs_layout_a_row_per_rank() -> None:
    actions = generate("dualpipev", 2, 2, 4).actions
    rows = dump_csv(actions).splitlines()
    assert len(rows) == 2
    assert rows[0].split(",")[6:9] == ["3F1", "(0F3;3B1)OVERLAP_F_B", "(3F2;0B0)OVERLAP_F_B"]


def test_load_skips_idle_cells_and_fsdp_markers() -> None:
    text = "0UNSHARD,0F0,,0SEND_F0,,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\r\n,1RECV_F0,1F0,1B0,1SEND_B0\r\n"
    assert [[str(a) for a in rank] for rank in load_csv(text)] == [
        ["0F0", "0SEND_F0", "0RECV_B0", "0B0"], ["1RECV_F0", "1F0", "1B0", "1SEND_B0"]
    ]


def test_load_reads_monarchs_dialect() -> None:
    """Monarch: BW is a full backward, B with a W is an input backward, batched comms split."""
    text = "0F0,0F1,0BW0,0B1,0W1_rs\n1F0,1SEND_B0_1RECV_F1,1F1\n"
    assert [[str(a) for a in rank] for rank in load_csv(text)] == [
        ["0F0", "0F1", "0B0", "0I1", "0W1"], ["1F0", "1SEND_B0", "1RECV_F1", "1F1"]
    ]
    assert load_csv("0F0,0B0,0I1,0W1\n")[0][1] == parse_action("0B0")  # torch's B stays B


@given(action_lists)
def test_table_has_a_column_per_rank_and_a_row_per_step(actions: list[list[Action]]) -> None:
    lines = format_table(actions).splitlines()
    assert lines[0].split("  ")[0] == "step"
    assert lines[0].count("rank ") == len(actions)
    assert len(lines) == 1 + max((len(a) for a in actions), default=0)


@given(action_lists)
def test_table_cells_are_each_action_text_in_aligned_columns(actions: list[list[Action]]) -> None:
    lines = format_table(actions).splitlines()
    for step, line in enumerate(lines[1:]):
        assert line.split() == [str(step), *(str(a[step]) for a in actions if step < len(a))]
    starts = [lines[0].index(f"rank {rank}") for rank in range(len(actions))]
    for line in lines[1:]:  # every cell starts at its column
        assert all(line[start - 2:start] == "  " for start in starts if start < len(line))


def test_table_aligns_ranks_and_leaves_finished_ranks_blank() -> None:
    actions = lower(generate("gpipe", 2, 1, 1)).actions + [[]]
    assert format_table(actions).splitlines() == [
        "step  rank 0    rank 1    rank 2",
        "0     0F0       1RECV_F0",
        "1     0SEND_F0  1F0",
        "2     0RECV_B0  1B0",
        "3     0B0       1SEND_B0",
    ]


def test_more_ranks_than_steps_and_no_ranks() -> None:
    assert format_table([[], [], []]) == "step  rank 0  rank 1  rank 2"
    assert format_table([]) == "step"
    assert load_csv(dump_csv([[], [], []])) == [[], [], []]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("0F0,1X0\n", "schedule CSV rank 0: cannot parse action '1X0'"),
        ("rank 1,rank 0\n", "'rank 1,rank 0' is not 'rank 0,rank 1'"),
        ("rank 0\n0F0,1F0\n", "line 2 '0F0,1F0' has 2 cells"),
        ("rank 0,rank 1\n,1F0\n0F0,1F1\n", "line 3: rank 0 has '0F0' after an empty cell"),
    ],
)
def test_load_csv_rejects_malformed_input(text: str, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        load_csv(text)


def test_load_csv_quotes_a_bad_cell() -> None:
    with pytest.raises(ActionParseError, match="'0X0'"):
        load_csv("rank 0\n0X0\n")
