"""``meshdbg schedule`` through ``main()``: table, JSON, files and exit statuses."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from meshdbg.worker.pipelining.cli import main
from meshdbg.worker.pipelining.render import load_csv

BASE = ["--kind", "interleaved-1f1b", "--ranks", "4", "--stages-per-rank", "2", "--microbatches", "8"]


def test_prints_table_makespan_and_bubble(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(BASE) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["step", "rank", "0", "rank", "1", "rank", "2", "rank", "3"]
    assert out[1].split() == ["0", "0F0", "1F0", "2F0", "3F0"]
    assert "makespan: 57" in out
    assert out[-2] == "bubble: rank 0 0.158, rank 1 0.158, rank 2 0.158, rank 3 0.158"


def test_json_is_one_object_with_the_lowered_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--lowered", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["kind"], data["ranks"], data["stages_per_rank"], data["microbatches"]) == ("interleaved-1f1b", 4, 2, 8)
    assert data["makespan"] == 57
    assert len(data["bubble"]) == len(data["peak_activations"]) == len(data["actions"]) == 4
    assert data["actions"][1][:3] == ["1RECV_F0", "1F0", "1SEND_F0"]


def test_writes_csv_svg_and_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {name: tmp_path / f"out.{name}" for name in ("csv", "svg", "trace")}
    args = [*BASE, "--json", "--costs", "B=3,send=0.5"]
    for name, path in paths.items():
        args += [f"--{name}", str(path)]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    loaded = load_csv(paths["csv"].read_text(encoding="utf-8"))
    assert [[str(a) for a in rank] for rank in loaded] == data["actions"]
    assert paths["svg"].read_text(encoding="utf-8").startswith("<svg")
    assert "traceEvents" in json.loads(paths["trace"].read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "interleaved-1f1b", "--ranks", "4", "--stages-per-rank", "2", "--microbatches", "6"], "multiple of ranks"),
        (["--kind", "zbv", "--ranks", "4", "--microbatches", "8"], "exactly two stages per rank"),
        ([*BASE, "--costs", "F=fast"], "'F=fast'"),
        (["--kind", "nope", "--ranks", "1", "--microbatches", "1"], "invalid choice: 'nope'"),
    ],
)
def test_usage_and_constraint_errors_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_constraint_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--kind", "gpipe", "--ranks", "2", "--stages-per-rank", "2", "--microbatches", "2"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_unwritable_output_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--csv", str(tmp_path / "missing" / "out.csv")]) == 1
    assert "cannot write output" in capsys.readouterr().err


def test_python_dash_m_runs_main() -> None:
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run(
        [sys.executable, "-m", "meshdbg.worker.pipelining", "--kind", "1f1b", "--ranks", "2", "--microbatches", "2", "--json"],
        cwd=root, capture_output=True, text=True, timeout=30, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["makespan"] == 9
