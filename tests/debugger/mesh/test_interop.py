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


def test_the_env_convention_alone_gives_the_rank_and_what_it_can_of_the_coordinates() -> None:
    # torch.distributed's env:// variables, as DeepSpeed's launcher or a job's own spawner sets them
    assert (detect_identity({"RANK": "5", "WORLD_SIZE": "8"}).rank, detect_identity({"RANK": "5"}).coords,
            detect_identity({"RANK": "5"}).launcher) == (5, {}, "env")
    assert detect_identity({"RANK": "5", "LOCAL_RANK": "1"}).coords == {"gpus": 1}
    assert detect_identity({"RANK": "5", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4"}).coords == {"hosts": 1, "gpus": 1}
    assert detect_identity({"RANK": "5", "LOCAL_RANK": "1", "NODE_RANK": "3"}).coords == {"hosts": 3, "gpus": 1}
    # under srun one task may spawn a process per GPU, each with its own RANK
    env = {"RANK": "9", "LOCAL_RANK": "1", "GROUP_RANK": "2", "SLURM_PROCID": "2", "SLURM_NODEID": "2",
           "SLURM_LOCALID": "0"}
    assert (detect_identity(env).rank, detect_identity(env).coords, detect_identity(env).launcher) == (
        9, {"hosts": 2, "gpus": 1}, "env")


def test_processes_with_only_the_env_convention_stop_as_their_ranks(server: Server) -> None:
    for rank in (0, 1):
        server.worker("stop_forever.py", None, env={**server.env, "RANK": str(rank), "LOCAL_RANK": str(rank),
                                                     "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"})
    sessions = {s["rank"]: s for s in server.wait_sessions(2)}
    assert sorted(sessions) == [0, 1]  # before: both rank 0
    assert [sessions[rank]["coords"] for rank in (0, 1)] == [{"hosts": 0, "gpus": 0}, {"hosts": 0, "gpus": 1}]


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
