"""The pipeline runtime on real processes over gloo: every schedule kind gives the gradients of
an unpipelined run, and a failing action names its rank and action."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from e2e import Server, wait_for  # noqa: E402
from meshdbg.worker.pipelining.toymodel import reference_step  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "pipeline_train.py"
HIDDEN, BATCH, SEED = 8, 16, 3


def start_ranks(tmp_path: Path, ranks: int, *args: str, env: dict[str, str] | None = None,
                script: list[str] | None = None) -> list[subprocess.Popen]:
    """Start the example (or `script`, which runs it) on `ranks` processes that meet through a
    rendezvous file."""
    rendezvous = f"file://{tmp_path / 'rendezvous'}"
    base = env or dict(os.environ, PYTHONBREAKPOINT="0")
    command = script or [str(EXAMPLE), "--init-method", rendezvous]
    return [
        subprocess.Popen([sys.executable, *command, "--hidden", str(HIDDEN), "--batch", str(BATCH), "--seed", str(SEED),
                          *args],
                         env=dict(base, RANK=str(rank), WORLD_SIZE=str(ranks), MESHDBG_RANK=str(rank),
                                  MESHDBG_COORDS=f"pp={rank}"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for rank in range(ranks)
    ]


def run_ranks(tmp_path: Path, ranks: int, *args: str, env: dict[str, str] | None = None,
              timeout: float = 90, script: list[str] | None = None) -> list[subprocess.CompletedProcess]:
    """Run the example (or `script`) to completion on `ranks` processes."""
    return finish(start_ranks(tmp_path, ranks, *args, env=env, script=script), timeout)


def finish(processes: list[subprocess.Popen], timeout: float = 90) -> list[subprocess.CompletedProcess]:
    results = []
    try:
        for process in processes:
            out, err = process.communicate(timeout=timeout)
            results.append(subprocess.CompletedProcess(process.args, process.returncode, out, err))
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.communicate()
    return results


def check_gradients(tmp_path: Path, ranks: int, stages_per_rank: int) -> None:
    """Every rank's dumped loss and gradients equal one unpipelined step's."""
    dumps = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(ranks)]
    expected_loss, expected_grads = reference_step(ranks * stages_per_rank, HIDDEN, SEED, BATCH)
    losses = [d["loss"] for d in dumps if d["loss"] is not None]
    assert losses == [pytest.approx(expected_loss, abs=1e-5)]
    grads = {name: values for d in dumps for name, values in d["grads"].items()}
    assert sorted(grads) == sorted(expected_grads)
    for name, values in expected_grads.items():
        assert grads[name] == pytest.approx(values, abs=1e-5), name


ONE_STEP_CASES = [  # (kind, ranks, stages per rank), each run with 4 microbatches
    ("gpipe", 2, 1),
    ("1f1b", 3, 1),
    ("interleaved-1f1b", 2, 2),
    ("interleaved-1f1b", 3, 2),  # microbatches not a multiple of ranks, as torch allows
    ("dora-dfs", 2, 2),
    ("interleaved-1f1b-tight", 2, 2),
    ("looped-bfs", 2, 2),
    ("zb1p", 2, 2),
    ("zb1p-greedy", 2, 2),
    ("zbv", 2, 2),
    ("zbv-greedy", 2, 2),
    ("dualpipev", 2, 2),  # overlapped F+B steps, and B, I and W mixed on one stage
]


@pytest.fixture(scope="module")
def one_step_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, list[subprocess.CompletedProcess]]]:
    """For each number of ranks, one launch that trains one step of each of its cases in turn
    (each_schedule.py): the folder of the cases' dumps and the ranks' results."""
    runs = {}
    for ranks in sorted({ranks for _, ranks, _ in ONE_STEP_CASES}):
        folder = tmp_path_factory.mktemp(f"one-step-{ranks}-ranks")
        cases = [f"{kind}:{spr}" for kind, count, spr in ONE_STEP_CASES if count == ranks]
        runs[ranks] = folder, run_ranks(folder, ranks, "--microbatches", "4", timeout=150,
                                        script=[str(Path(__file__).parent / "each_schedule.py"), str(folder), *cases, "--"])
    return runs


@pytest.mark.parametrize("kind, ranks, stages_per_rank", ONE_STEP_CASES)
def test_one_step_matches_the_unpipelined_gradients(one_step_runs: dict[int, tuple[Path, list[subprocess.CompletedProcess]]],
                                                    kind: str, ranks: int, stages_per_rank: int) -> None:
    folder, results = one_step_runs[ranks]
    for result in results:
        assert result.returncode == 0, result.stderr
    check_gradients(folder / f"{kind}-{stages_per_rank}", ranks, stages_per_rank)


def test_breakpoint_in_a_stage_shows_pipeline_context(tmp_path: Path, server: Server) -> None:
    env = dict(server.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
    processes = start_ranks(tmp_path, 4, "--schedule", "1f1b", "--microbatches", "4", "--steps", "1",
                            "--break-at", "2F3", "--dump-grads", str(tmp_path), env=env)
    server.workers.extend(processes)
    (session,) = server.wait_sessions(1, timeout=60)
    assert session["rank"] == 2 and session["coords"] == {"pp": 2}
    assert session["context"] == {"stage": "2", "microbatch": "3", "action": "2F3"}
    assert session["function"] == "forward"
    cast = server.cli("cast", "--json", "ranks(pp=1:3)", "p pipeline_context().microbatch")
    assert cast.returncode == 0, cast.stderr
    assert [(r["rank"], r["output"].strip()) for r in json.loads(cast.stdout)] == [(2, "3")]
    assert server.cli("continue").returncode == 0
    for result in finish(processes):
        assert result.returncode == 0, result.stderr
    check_gradients(tmp_path, 4, 1)


def test_loss_goes_down_over_steps(tmp_path: Path) -> None:
    results = run_ranks(tmp_path, 2, "--schedule", "1f1b", "--microbatches", "4", "--steps", "5")
    last = results[-1].stdout.splitlines()
    losses = [float(line.split("loss ")[1].split()[0]) for line in last]
    assert len(losses) == 5 and losses[-1] < losses[0]
    assert all("bubble" in line for result in results for line in result.stdout.splitlines())


def test_a_failing_action_names_rank_and_action(tmp_path: Path) -> None:
    results = run_ranks(tmp_path, 2, "--schedule", "1f1b", "--microbatches", "4", "--steps", "1",
                        "--raise-at", "1,2", timeout=150)
    failing = results[1]
    assert failing.returncode != 0
    assert "meshdbg: rank 1 failed in action 1F2" in failing.stderr
    assert "injected failure in stage 1 microbatch 2" in failing.stderr


def test_a_raised_error_stops_the_mesh_in_bounded_time(tmp_path: Path) -> None:
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"))
    result = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--no-post-mortem", "--mesh", "pp=3", str(EXAMPLE),
                             "--schedule", "1f1b", "--microbatches", "4", "--steps", "50", "--raise-at", "2,1"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "rank 2 failed in action 2F1" in result.stderr
    assert "meshdbg: rank 2 failed first (exit status 1); the mesh was stopped" in result.stderr
    assert "step 49" not in result.stdout


def test_a_raised_error_opens_a_post_mortem_with_its_pipeline_context(tmp_path: Path) -> None:
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"), MESHDBG_TOKEN="pm-token")
    run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", "pp=2", str(EXAMPLE), "--schedule",
                            "1f1b", "--microbatches", "4", "--steps", "1", "--raise-at", "1,2"],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def post_mortems() -> list[dict]:
            listed = subprocess.run([sys.executable, "-m", "meshdbg", "list", "--json"], env=env,
                                    capture_output=True, text=True, timeout=20)
            return [s for s in json.loads(listed.stdout or "[]")  # stopped: its first prompt (with its frame) arrived
                    if s["reason"] == "post-mortem" and s["state"] == "stopped"]

        (session,) = wait_for(post_mortems, timeout=60, what="a post-mortem session")
        assert session["rank"] == 1
        assert session["context"] == {"stage": "1", "microbatch": "2", "action": "1F2"}
        assert session["function"] == "forward"
        assert subprocess.run([sys.executable, "-m", "meshdbg", "continue"], env=env, timeout=20).returncode == 0
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 1
    assert "meshdbg: rank 1 failed in action 1F2" in err
    assert "meshdbg: rank 1 failed first (exit status 1); the mesh was stopped" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--schedule", "zbv", "--microbatches", "4"], "zbv places exactly two stages per rank"),
    (["--schedule", "1f1b", "--microbatches", "3"], "--batch 16 must split into --microbatches 3 equal parts"),
])
def test_a_schedule_the_mesh_cannot_run_is_a_usage_error(tmp_path: Path, args: list[str], message: str) -> None:
    """Each rank says so in one line and exits 2 before waiting for the others."""
    for result in run_ranks(tmp_path, 2, *args, timeout=60):
        assert result.returncode == 2
        assert result.stderr.startswith("pipeline_train: error: ") and result.stderr.count("\n") == 1
        assert message in result.stderr
