"""bench/bench_floor.py, bench/bench_least_path.py, bench/bench_timeline.py and bench/bench_worker_ab.py run end to end at tiny sizes: a JSON line per path with its ratio,
a FAIL line for each ratio past its target, the CPU each process spent per operation where
the bench meters it, and --strict's exit status (issue 22).

The figures themselves are not checked here (a loaded machine moves them): the bench is
the guard of the ratios, this test only that the bench works."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_floor.py"
LEAST_PATH = BENCH.with_name("bench_least_path.py")
TIMELINE = BENCH.with_name("bench_timeline.py")
WORKER_AB = BENCH.with_name("bench_worker_ab.py")
PATHS = {"attach_p_api", "attach_p_plain", "run_p", "cast_2", "continue_2", "cast_8", "continue_8", "list_api",
         "list_cli", "memory", "cli_start", "schedule"}


@pytest.mark.timeout(150)
def test_the_floor_bench_prints_a_ratio_per_path_and_fails_strictly() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--quick", "--strict", "--workers", "2", "--sessions", "30",
                           "--schedule", "4,2,8", "--big", "--big-sessions", "8"],
                          capture_output=True, text=True, timeout=140)
    assert done.returncode in (0, 2), done.stderr[-3000:]
    lines = done.stdout.splitlines()
    records = {r["path"]: r for r in (json.loads(line) for line in lines if line.startswith('{"path"'))}
    assert set(records) == PATHS
    for record in records.values():  # ours_ms and floor_ms, or ours_kib and floor_kib
        (ours, floor), = ((v, record[k.replace("ours_", "floor_")]) for k, v in record.items() if k.startswith("ours_"))
        assert record["ratio"] == pytest.approx(ours / floor, rel=0.02)
    for path in ("attach_p_api", "attach_p_plain", "run_p", "cast_2"):  # where the time goes, process by process
        sides = records[path]["cpu_us"]
        assert set(sides) == {"ours", "floor"}, sides
        assert all(us > 0 for parts in sides.values() for us in parts.values()), sides
    failed = [line for line in lines if line.startswith("FAIL ")]
    assert all(re.fullmatch(r"FAIL \S+ ratio [0-9.]+ > target [0-9.]+", line) for line in failed)
    assert {line.split()[1] for line in failed} == {p for p, r in records.items() if r["ratio"] > r["target"]}
    summary = json.loads(lines[-1])
    assert summary["failed"] == [line.split()[1] for line in failed]
    assert done.returncode == (2 if failed else 0)


@pytest.mark.timeout(90)
def test_the_least_path_bench_prints_each_process_swapped_in_against_the_echo() -> None:
    done = subprocess.run([sys.executable, str(LEAST_PATH), "--reps", "2"], capture_output=True, text=True, timeout=80)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["path"] for r in records] == ["two_hop_echo", "two_hop_echo_uvloop", "two_hop_echo_polled", "least",
                                              "meshdbg_worker", "meshdbg_server", "meshdbg", "one_hop_echo",
                                              "one_hop_least", "one_hop_meshdbg_worker", "one_hop_meshdbg"]
    floor_ms = {r["path"]: r["ms"] for r in records if r["path"] in ("two_hop_echo", "one_hop_echo")}
    for record in records:
        assert record["ms"] > 0
        assert record["floor"] == ("one_hop_echo" if record["path"].startswith("one_hop") else "two_hop_echo")
        assert record["ratio"] == pytest.approx(record["ms"] / floor_ms[record["floor"]],
                                                abs=0.01 + 0.02 * record["ratio"])


@pytest.mark.timeout(90)
@pytest.mark.parametrize("watch", [False, True], ids=["alone", "watched"])
def test_the_timeline_bench_cuts_the_round_trip_into_legs_that_add_up_to_it(watch: bool) -> None:
    done = subprocess.run([sys.executable, str(TIMELINE), "--count", "200", *(["--watch"] if watch else [])],
                          capture_output=True, text=True, timeout=80)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(done.stdout.splitlines()[-1])
    legs = record["legs_us"]
    assert list(legs) == ["client_to_write", "to_worker", "worker_before_pdb", "pdb_command", "worker_after_pdb",
                          "to_server", "server_prompt", "back_to_client"]
    assert all(us > 0 for us in legs.values()), legs
    assert record["round_trips"] >= 100 and record["local_pdb_command_us"] > 0
    assert record["watch"] is watch and (record["watch_events_per_round_trip"] > 0 if watch
                                         else "watch_events_per_round_trip" not in record)
    # medians of the legs need not add up to the median round trip exactly, but nearly: a leg
    # marked out of order (a mark missed, or taken in another round trip) would not
    assert record["legs_sum_us"] == pytest.approx(record["round_trip_us"], rel=0.5), record


@pytest.mark.timeout(90)
def test_the_worker_ab_bench_runs_two_revisions_side_by_side_and_leaves_no_worktree() -> None:
    worktrees = subprocess.run(["git", "-C", str(BENCH.parents[1]), "worktree", "list"], capture_output=True, text=True,
                               check=True).stdout
    done = subprocess.run([sys.executable, str(WORKER_AB), "--base", "HEAD", "--blocks", "2", "--count", "5",
                           "--warmup", "5"], capture_output=True, text=True, timeout=80)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads(done.stdout.splitlines()[-1])
    assert record["bench"] == "worker_ab" and record["base_revision"] == "HEAD" and record["blocks"] == 4
    for side in ("base", "tree"):
        assert record[side]["round_trip_us"] > 0 and record[side]["worker_cpu_us"] > 0, record
    assert set(record["tree_minus_base"]) == {"round_trip_us", "worker_cpu_us"}
    assert subprocess.run(["git", "-C", str(BENCH.parents[1]), "worktree", "list"], capture_output=True, text=True,
                          check=True).stdout == worktrees


@pytest.mark.timeout(30)
def test_a_bench_fails_at_once_when_a_process_that_serves_exits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A round trip through a server or echo worker that has exited would wait for good (a
    bench hung so in CI): the bench fails instead, saying which, with its stderr."""
    monkeypatch.syspath_prepend(str(BENCH.parent))
    import asyncio

    from bench_core import Processes, ran

    async def wait_through_it(procs: Processes) -> None:
        procs.spawn([sys.executable, "-c", "import sys; print('the echo is gone', file=sys.stderr); sys.exit(3)"],
                    {}, serves=True)
        await asyncio.Event().wait()  # a reply that never comes

    with open(tmp_path / "log", "wb") as log:
        assert not ran("bench", wait_through_it, log, tmp_path / "log")
    why = capsys.readouterr().err
    assert "exited with status 3 mid-run" in why and "the echo is gone" in why, why
