"""Worker identity from meshdbg and other launchers' environments (DESIGN §3)."""

from __future__ import annotations

import pytest

from meshdbg.wire.errors import UsageError
from meshdbg.wire.coords import parse_coords
from meshdbg.worker.identity import detect_identity


def test_meshdbg_variables_win() -> None:
    env = {"MESHDBG_RANK": "5", "MESHDBG_COORDS": "hosts=1,gpus=1", "MESHDBG_NAME": "trainer",
           "RANK": "9", "TORCHELASTIC_RUN_ID": "x", "SLURM_PROCID": "3"}
    identity = detect_identity(env)
    assert (identity.name, identity.rank, identity.coords, identity.launcher) == ("trainer", 5, {"hosts": 1, "gpus": 1}, "meshdbg")
    assert list(identity.coords) == ["hosts", "gpus"]


def test_torchrun_wins_over_slurm_under_srun_torchrun() -> None:
    env = {"TORCHELASTIC_RUN_ID": "job", "RANK": "6", "LOCAL_RANK": "2", "GROUP_RANK": "1",
           "SLURM_PROCID": "1", "SLURM_LOCALID": "0", "SLURM_NODEID": "1"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (6, {"hosts": 1, "gpus": 2}, "torchrun")


def test_open_mpi() -> None:
    env = {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (5, {"hosts": 1, "gpus": 1}, "openmpi")


def test_mpich() -> None:
    env = {"PMI_RANK": "3", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (3, {"hosts": 1, "gpus": 1}, "mpich")


def test_slurm() -> None:
    env = {"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NODEID": "1"}
    identity = detect_identity(env)
    assert (identity.rank, identity.coords, identity.launcher) == (7, {"hosts": 1, "gpus": 3}, "slurm")


def test_no_launcher_is_rank_zero() -> None:
    identity = detect_identity({})
    assert (identity.name, identity.rank, identity.coords, identity.launcher) == ("worker", 0, {}, "none")


@pytest.mark.parametrize("env", [{"MESHDBG_RANK": "two"}, {"MESHDBG_RANK": "1", "MESHDBG_COORDS": "hosts=x"},
                                 {"MESHDBG_RANK": "1", "MESHDBG_COORDS": "hosts"}])
def test_bad_values_are_usage_errors(env: dict[str, str]) -> None:
    with pytest.raises(UsageError):
        detect_identity(env)


def test_parse_coords_keeps_order() -> None:
    assert list(parse_coords("pp=1, dp=0,tp=3")) == ["pp", "dp", "tp"]
