"""Jobs started by other launchers join the debugger with no code change."""

from __future__ import annotations

import subprocess
import sys

import pytest

from e2e import Server
from mesh_helpers import SCRIPTS, all_in, wait_workers
from meshdbg.worker.identity import detect_identity


def _torchrun(server: Server, nproc: int, *target: str) -> subprocess.Popen:
    pytest.importorskip("torch")
    # torchrun's own entry point (the `torchrun` console script is torch.distributed.run:main),
    # run with this interpreter rather than through a version-manager shim on PATH

    env = dict(server.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook", PYTHONUNBUFFERED="1")
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT", "MESHDBG_RANK"):
        env.pop(key, None)
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
                             *target], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=SCRIPTS)


def _finish(job: subprocess.Popen) -> str:
    out, err = job.communicate(timeout=60)
    assert job.returncode == 0, err
    return out


@pytest.mark.torch
def test_torchrun_job_shows_up_with_its_ranks_and_coords(server: Server) -> None:
    job = _torchrun(server, 4, "torchrun_stop.py")
    try:
        sessions = {s["rank"]: s for s in server.wait_sessions(4, timeout=40)}
        assert sorted(sessions) == [0, 1, 2, 3]
        for rank, session in sessions.items():
            assert session["coords"] == {"hosts": 0, "gpus": rank}
            assert session["filename"].endswith("torchrun_stop.py") and session["reason"] == "breakpoint"
        assert server.cli("continue").returncode == 0
        assert _finish(job).count("continued") == 4
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()


@pytest.mark.torch
def test_torchrun_with_the_bootstrap_registers_every_worker(server: Server) -> None:
    job = _torchrun(server, 2, "-m", "meshdbg.worker.mesh.bootstrap", "torchrun_stop.py")
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
        if job.poll() is None:
            job.kill()
            job.communicate()


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
