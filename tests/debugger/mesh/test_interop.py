"""Jobs started by other launchers join the debugger with no code change."""

from __future__ import annotations

import subprocess

import pytest

from e2e import Server, stop_process
from mesh_helpers import all_in, torchrun, wait_workers
from meshdbg.worker.identity import detect_identity


def _finish(job: subprocess.Popen) -> str:
    out, err = job.communicate(timeout=60)
    assert job.returncode == 0, err
    return out


@pytest.mark.torch
def test_torchrun_job_shows_up_with_its_ranks_and_coords(server: Server) -> None:
    job = torchrun(server.env, 4, "torchrun_stop.py")
    try:
        sessions = {s["rank"]: s for s in server.wait_sessions(4, timeout=40)}
        assert sorted(sessions) == [0, 1, 2, 3]
        for rank, session in sessions.items():
            assert session["coords"] == {"hosts": 0, "gpus": rank}
            assert session["filename"].endswith("torchrun_stop.py") and session["reason"] == "breakpoint"
        assert server.cli("continue").returncode == 0
        assert _finish(job).count("continued") == 4
    finally:
        stop_process(job)


@pytest.mark.torch
def test_torchrun_with_the_bootstrap_registers_every_worker(server: Server) -> None:
    job = torchrun(server.env, 2, "-m", "meshdbg.worker.mesh.bootstrap", "torchrun_stop.py")
    try:
        server.wait_sessions(2, timeout=40)
        workers = wait_workers(server.cli, all_in("stopped", 2), "two stopped torchrun workers", 20)
        assert [w["launcher"] for w in workers.values()] == ["torchrun", "torchrun"]
        assert list(workers) == [0, 1]
        assert server.cli("continue").returncode == 0
        _finish(job)
        exited = wait_workers(server.cli, all_in("exited", 2), "both torchrun workers exited", 20)
        assert [w["exit_code"] for w in exited.values()] == [0, 0]
    finally:
        stop_process(job)


def test_slurm_variables() -> None:
    env = {"SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NODEID": "2", "MESHDBG_NAME": "trainer"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher, identity.name) == (
        5, {"hosts": 2, "gpus": 1}, "slurm", "trainer")


def test_open_mpi_variables() -> None:
    env = {"OMPI_COMM_WORLD_RANK": "6", "OMPI_COMM_WORLD_LOCAL_RANK": "2", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    assert (detect_identity(env).rank, detect_identity(env).coords, detect_identity(env).launcher) == (
        6, {"hosts": 1, "gpus": 2}, "openmpi")
    env["OMPI_COMM_WORLD_NODE_RANK"] = "3"
    assert detect_identity(env).coords == {"hosts": 3, "gpus": 2}


def test_torchrun_variables_win_under_srun() -> None:
    env = {"TORCHELASTIC_RUN_ID": "job", "RANK": "3", "LOCAL_RANK": "1", "GROUP_RANK": "1",
           "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NODEID": "0", "OMPI_COMM_WORLD_RANK": "0"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (3, {"hosts": 1, "gpus": 1}, "torchrun")


def test_meshdbg_variables_win_over_every_launcher() -> None:
    env = {"MESHDBG_RANK": "4", "MESHDBG_COORDS": "pp=1,dp=0", "TORCHELASTIC_RUN_ID": "job", "RANK": "9",
           "SLURM_PROCID": "7"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (4, {"pp": 1, "dp": 0}, "meshdbg")
