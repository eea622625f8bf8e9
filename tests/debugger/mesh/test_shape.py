"""Mesh shapes: row-major ranks, slices, parsing errors, and the environment of a rank."""

from __future__ import annotations

import pytest

from meshdbg.wire.errors import UsageError
from meshdbg.debugger.mesh.shape import MeshShape, rank_env


def test_ranks_are_row_major_last_dimension_fastest() -> None:
    shape = MeshShape.parse("hosts=2,gpus=4")
    assert shape.size == 8 and shape.names == ("hosts", "gpus")
    assert [shape.coords(r) for r in (0, 3, 4, 7)] == [{"hosts": 0, "gpus": 0}, {"hosts": 0, "gpus": 3},
                                                       {"hosts": 1, "gpus": 0}, {"hosts": 1, "gpus": 3}]
    three = MeshShape.of({"pp": 2, "dp": 3, "tp": 2})
    assert three.coords(7) == {"pp": 1, "dp": 0, "tp": 1}
    assert str(three) == "pp=2,dp=3,tp=2"


def test_slices_by_index_slice_and_collection() -> None:
    shape = MeshShape.parse("hosts=2,gpus=4")
    assert shape.ranks(hosts=0) == [0, 1, 2, 3]
    assert shape.ranks(gpus=slice(0, 2)) == [0, 1, 4, 5]
    assert shape.ranks(hosts=1, gpus=(0, 3)) == [4, 7]
    with pytest.raises(UsageError, match="unknown mesh dimension nodes"):
        shape.ranks(nodes=0)


@pytest.mark.parametrize("text, message", [("hosts=x", "bad --mesh"), ("hosts", "bad --mesh"),
                                           ("hosts=0", "at least 1"), ("", "at least one dimension"),
                                           ("hosts=2,hosts=3", "dimension 'hosts' given twice")])
def test_bad_shapes_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        MeshShape.parse(text)


def test_rank_env_has_meshdbg_and_torch_variables() -> None:
    env = rank_env(MeshShape.parse("hosts=2,gpus=3"), 4, name="trainer", addr="127.0.0.1:5", token="t",
                   master_addr="127.0.0.1", master_port=29500)
    assert env["MESHDBG_COORDS"] == "hosts=1,gpus=1" and env["MESHDBG_RANK"] == env["RANK"] == "4"
    assert (env["WORLD_SIZE"], env["LOCAL_RANK"], env["MASTER_PORT"]) == ("6", "1", "29500")
    assert env["MESHDBG_NAME"] == "trainer" and env["PYTHONBREAKPOINT"] == "meshdbg.worker.remote_breakpointhook"
    off = rank_env(MeshShape.parse("hosts=2,gpus=3"), 4, name="trainer", addr="127.0.0.1:5", token="t",
                   master_addr="127.0.0.1", master_port=29500, breakpoints=False)
    assert off["PYTHONBREAKPOINT"] == "0"  # the run's PYTHONBREAKPOINT=0, passed on: breakpoint() does nothing



HEAVY = ("prompt_toolkit", "meshdbg.debugger.console", "meshdbg.debugger.cli", "meshdbg.debugger.run")


@pytest.mark.parametrize("module", ["meshdbg.worker.mesh.bootstrap", "meshdbg.debugger.mesh.procmesh", "meshdbg.worker.mesh.zygote"])
def test_worker_mesh_never_imports_the_console_or_cli(module: str) -> None:
    import subprocess
    import sys

    probe = f"import sys, {module}; sys.exit(any(m.startswith({HEAVY!r}) for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", probe]).returncode == 0
