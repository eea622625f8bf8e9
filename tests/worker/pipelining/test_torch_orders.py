"""torch 2.13's torch.distributed.pipelining is the oracle: each kind named after a published
schedule produces exactly torch's compute order, accepts what torch accepts, and the CSV
round-trips through torch's own ``_load_csv``/``_dump_csv``.

torch builds every rank's order in each process from its stages' group size, so a fake stage
(an autospec'd ``PipelineStage`` with ``group_size`` = p) is enough to get all of them, as
torch's own ``_schedule_visualizer.get_schedule_ops`` does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from unittest import mock

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.distributed.pipelining import schedules as torch_schedules  # noqa: E402
from torch.distributed.pipelining.stage import PipelineStage  # noqa: E402

from meshdbg.worker.pipelining.columns import ActionRows  # noqa: E402
from meshdbg.worker.pipelining.errors import ConstraintError  # noqa: E402
from meshdbg.worker.pipelining.loaded import as_schedule  # noqa: E402
from meshdbg.worker.pipelining.lowering import lower  # noqa: E402
from meshdbg.worker.pipelining.render import dump_csv, load_csv  # noqa: E402
from meshdbg.worker.pipelining.schedules import generate  # noqa: E402
from meshdbg.worker.pipelining.simulator import simulate, step_grid  # noqa: E402

TORCH_CLASS = {
    "gpipe": torch_schedules.ScheduleGPipe,
    "1f1b": torch_schedules.Schedule1F1B,
    "interleaved-1f1b": torch_schedules.ScheduleInterleaved1F1B,
    "dora-dfs": torch_schedules.ScheduleInterleaved1F1B,
    "looped-bfs": torch_schedules.ScheduleLoopedBFS,
    "zb1p": torch_schedules.ScheduleInterleavedZeroBubble,
    "zbv": torch_schedules.ScheduleZBVZeroBubble,
    "dualpipev": torch_schedules.ScheduleDualPipeV,
}
SKIPPED = (torch_schedules.REDUCE_GRAD, torch_schedules.UNSHARD, torch_schedules.RESHARD)


@cache
def fake_stage(p: int, v: int) -> PipelineStage:
    """A stand-in for rank 0's stages in a group of p ranks with v stages each."""
    stage = mock.create_autospec(PipelineStage, instance=True)
    stage.group_rank, stage.group_size, stage.submod, stage.num_stages = 0, p, None, p * v
    return stage


def torch_schedule(kind: str, p: int, v: int, m: int) -> torch_schedules._PipelineSchedule:
    """torch's schedule object for ``kind`` on fake stages (raises what torch raises)."""
    stage = fake_stage(p, v)
    cls = TORCH_CLASS[kind]
    single = issubclass(cls, torch_schedules.PipelineScheduleSingle)
    return cls(stage if single else [stage] * v, m)


def texts(order: dict[int, list] | list[list]) -> list[list[str]]:
    """Per-rank text forms without torch's idle steps (None) and FSDP/reduction markers."""
    ranks = [order[r] for r in range(len(order))]
    return [[str(a) for a in rank if a is not None and a.computation_type not in SKIPPED] for rank in ranks]


def torch_order(kind: str, p: int, v: int, m: int) -> list[list[str]] | None:
    """torch's compute order, or None when torch refuses (p, v, m)."""
    try:
        schedule = torch_schedule(kind, p, v, m)
    except (ValueError, AssertionError):
        return None
    single = isinstance(schedule, torch_schedules.PipelineScheduleSingle)
    return texts(schedule._get_pipeline_order() if single else schedule.pipeline_order)


def ours(kind: str, p: int, v: int, m: int) -> list[list[str]] | None:
    try:
        return [[str(a) for a in rank] for rank in generate(kind, p, v, m).actions]
    except ConstraintError:
        return None


def grid(stages_per_rank: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """The issue's grid (p in 2,3,4,8; m in p, p+1, 2p, 2p+2, 3p) plus p = 1 and m below p."""
    return sorted({(p, v, m) for p in (1, 2, 3, 4, 8) for v in stages_per_rank
                   for m in (1, p - 1, p, p + 1, 2 * p, 2 * p + 2, 3 * p) if m >= 1})


@pytest.mark.parametrize(("kind", "stages_per_rank"), [
    ("gpipe", (1,)), ("interleaved-1f1b", (1, 2, 3)), ("dora-dfs", (2, 3)), ("looped-bfs", (1, 2, 3)),
    ("zb1p", (1, 2, 3)), ("zbv", (2,)), ("dualpipev", (2,)),
])
def test_equals_torch_wherever_torch_accepts(kind: str, stages_per_rank: tuple[int, ...]) -> None:
    compared = 0
    for p, v, m in grid(stages_per_rank):
        expected = torch_order(kind, p, v, m)
        assert ours(kind, p, v, m) == expected, (kind, p, v, m)
        compared += expected is not None
    assert compared >= 10


@pytest.mark.parametrize(("kind", "p", "v", "m"), [
    ("gpipe", 16, 1, 640), ("interleaved-1f1b", 8, 4, 320), ("dora-dfs", 8, 4, 320), ("zb1p", 8, 4, 320),
])
def test_a_large_schedule_generated_as_arrays_equals_torch(kind: str, p: int, v: int, m: int) -> None:
    assert isinstance(generate(kind, p, v, m).actions, ActionRows)  # past LARGE: numpy's arrays
    assert ours(kind, p, v, m) == torch_order(kind, p, v, m) is not None


def test_interleaved_accepts_what_torch_accepts_on_the_issue_grid() -> None:
    """All 38 distinct configurations, the uneven ones (m % p != 0) included."""
    cases = {(p, v, m) for p in (2, 3, 4, 8) for v in (2, 3) for m in (p, p + 1, 2 * p, 2 * p + 2, 3 * p)}
    assert len(cases) == 38
    for case in cases:
        assert ours("interleaved-1f1b", *case) == torch_order("interleaved-1f1b", *case) is not None, case


def test_1f1b_accepts_what_torch_accepts() -> None:
    """(Its orders are compared below: torch draws the last rank's apart. It made a schedule
    for fewer microbatches than stages, which torch's Schedule1F1B refuses.)"""
    for p, v, m in grid((1,)):
        assert (ours("1f1b", p, v, m) is None) == (torch_order("1f1b", p, v, m) is None), (p, m)


def test_1f1b_is_the_textbook_order_torch_draws() -> None:
    """torch 2.13's Schedule1F1B._get_pipeline_order numbers the last rank's forwards from 1
    (1F1, 1B0, ..., a forward of microbatch m and none of 0), so the last rank is checked
    against the textbook order: F0 B0 F1 B1 ...; every other rank against torch."""
    for p, m in ((2, 2), (3, 5), (4, 8), (4, 9)):
        got = ours("1f1b", p, 1, m)
        drawn = texts(torch_schedule("1f1b", p, 1, m)._get_pipeline_order())
        assert got[:-1] == drawn[:-1], (p, m)
        assert got[-1] == [f"{p - 1}{t}{mb}" for mb in range(m) for t in "FB"]


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("kind", "p", "v", "m"), [
    ("interleaved-1f1b", 4, 2, 6), ("zb1p", 3, 2, 6), ("zbv", 2, 2, 5), ("dualpipev", 3, 2, 7), ("looped-bfs", 2, 3, 4),
])
def test_csv_round_trips_through_torchs_load_and_dump(tmp_path: Path, kind: str, p: int, v: int, m: int) -> None:
    schedule = generate(kind, p, v, m)
    mine = [[str(a) for a in rank] for rank in schedule.actions]
    # ours (by step, with its idle cells) -> torch's _load_csv (compute_only): torch reads
    # the same order, with None at the same idle steps, and accepts it.
    reader = torch_schedule(kind, p, v, m)
    grid = step_grid(schedule)
    reader._load_csv(write(tmp_path / "ours.csv", dump_csv(grid)))
    assert texts(reader.pipeline_order) == mine
    assert [[a is None for a in reader.pipeline_order[rank]] for rank in range(p)] == [[a is None for a in row] for row in grid]
    assert any(None in row for row in grid)
    # torch's _dump_csv (compute_only, with its idle cells) -> ours.
    reader._dump_csv(str(tmp_path / "torch.csv"), format="compute_only")
    assert load_csv((tmp_path / "torch.csv").read_text(encoding="utf-8")) == schedule.actions
    # torch's compute_comms -> ours: a valid lowered schedule with the same compute order.
    reader._dump_csv(str(tmp_path / "comms.csv"), format="compute_comms")
    loaded = as_schedule(load_csv((tmp_path / "comms.csv").read_text(encoding="utf-8")))
    assert loaded.stage_to_rank == schedule.stage_to_rank
    simulate(loaded)
    assert [[str(a) for a in rank if not a.type.is_comm] for rank in loaded.actions] == mine
    # our lowered CSV -> torch's _load_csv (compute_comms) reads every action as written.
    lowered = lower(schedule)
    comms_reader = torch_schedule(kind, p, v, m)
    comms_reader._load_csv(write(tmp_path / "ours-comms.csv", dump_csv(lowered.actions)), format="compute_comms")
    assert texts(comms_reader.pipeline_order_with_comms) == [[str(a) for a in rank] for rank in lowered.actions]
