"""``meshdbg schedule`` through ``main()``: table, JSON, files and exit statuses."""

import json
import resource
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


def test_csv_has_an_empty_cell_per_idle_step_unless_lowered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compute, lowered = tmp_path / "compute.csv", tmp_path / "lowered.csv"
    gpipe = ["--kind", "gpipe", "--ranks", "3", "--microbatches", "2"]
    assert main([*gpipe, "--csv", str(compute)]) == main([*gpipe, "--lowered", "--csv", str(lowered)]) == 0
    # Stage s starts s steps late; stage 0's B waits for stage 1's, which waits for stage 2's.
    assert compute.read_text(encoding="utf-8").splitlines() == [
        "0F0,0F1,,,,,0B0,0B1", ",1F0,1F1,,,1B0,1B1", ",,2F0,2F1,2B0,2B1"]
    assert "" not in {cell for line in lowered.read_text(encoding="utf-8").splitlines() for cell in line.split(",")}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "interleaved-1f1b-tight", "--ranks", "4", "--stages-per-rank", "2", "--microbatches", "6"],
         "multiple of ranks"),
        (["--kind", "interleaved-1f1b", "--ranks", "2", "--stages-per-rank", "2", "--microbatches", "7"],
         "multiple of 3"),
        (["--kind", "1f1b", "--ranks", "2"], "--kind 1f1b needs --microbatches"),
        (["--ranks", "2", "--microbatches", "2"], "one of the arguments --kind --load is required"),
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


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def test_load_reads_back_what_csv_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "zbv.csv"
    assert main(["--kind", "zbv", "--ranks", "3", "--stages-per-rank", "2", "--microbatches", "5", "--json",
                 "--csv", str(path)]) == 0
    written = json.loads(capsys.readouterr().out)
    assert main(["--load", str(path), "--json"]) == 0
    loaded = json.loads(capsys.readouterr().out)
    for key in ("ranks", "stages_per_rank", "microbatches", "makespan", "peak_activations", "actions"):
        assert loaded[key] == written[key], key
    assert loaded["kind"] == f"loaded {path}"


def test_load_lowers_and_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, svg = tmp_path / "d.csv", tmp_path / "d.svg"
    assert main(["--kind", "dualpipev", "--ranks", "2", "--stages-per-rank", "2", "--microbatches", "4",
                 "--csv", str(path), "--json"]) == 0
    capsys.readouterr()
    assert main(["--load", str(path), "--lowered", "--svg", str(svg), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "(0F3;3B1)OVERLAP_F_B" in data["actions"][0] and "2SEND_F0" in data["actions"][1]
    assert "OVERLAP_F_B" in svg.read_text(encoding="utf-8")


def test_load_names_a_missing_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing.csv"
    path.write_text("0F0,0F1,0B0,0B1\n1F0,1B0,1F1\n", encoding="utf-8")
    assert main(["--load", str(path)]) == 2
    assert "rank 1: 1B1 (or 1I1 and 1W1) missing" in one_line_error(capsys)


def test_load_names_a_misordered_action(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "misordered.csv"
    path.write_text("0F0,0W0,0I0\n", encoding="utf-8")
    assert main(["--load", str(path)]) == 2
    assert "rank 0 waits at step 1 (0W0 needs 0I/B0)" in one_line_error(capsys)


@pytest.mark.parametrize(("text", "message"), [
    (None, "cannot read --load"),
    ("0F0,0X1\n", "schedule CSV rank 0: cannot parse action '0X1'"),
    ("0F0,0B0\n0F0,0B0\n", "rank 1 step 0: 0F0 runs stage 0, which rank 0 runs"),
])
def test_load_errors_are_one_line_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               text: str | None, message: str) -> None:
    path = tmp_path / "bad.csv"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    assert main(["--load", str(path)]) == 2
    assert message in one_line_error(capsys)


def test_a_schedule_too_large_for_memory_is_one_line() -> None:
    """10**7 actions (1.5 GiB, which the machine has free) under a 1 GiB address space: numpy
    refuses its arrays, and that is said in one line."""
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    args = ["--kind", "gpipe", "--ranks", "1000", "--microbatches", "5000"]
    done = subprocess.run([sys.executable, "-m", "meshdbg.worker.pipelining", *args], preexec_fn=capped,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "meshdbg schedule: error: not enough memory for a schedule this large\n"


def test_a_schedule_past_the_free_memory_is_refused_before_it_is_made() -> None:
    """(p = m = 100,000 took 26 s and 10 GB before numpy's MemoryError.)"""
    args = ["--kind", "gpipe", "--ranks", "100000", "--microbatches", "100000"]
    done = subprocess.run([sys.executable, "-m", "meshdbg.worker.pipelining", *args], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("meshdbg schedule: error: a schedule of up to 30,000,000,000 actions needs about ")
    assert done.stderr.endswith(" GiB free\n") and done.stderr.count("\n") == 1
