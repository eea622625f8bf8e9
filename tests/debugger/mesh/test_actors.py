"""proc_mesh actors: calls on every rank, one rank and a slice; remote errors with rank and traceback."""

from __future__ import annotations

from typing import Iterator

import pytest

from meshdbg.wire.errors import ActorError, UsageError
from mesh_actors import Echo
from meshdbg.debugger.mesh import ProcMesh, proc_mesh


@pytest.fixture(scope="module")
def mesh() -> Iterator[ProcMesh]:
    with proc_mesh(hosts=2, gpus=2) as started:
        yield started


def test_call_reaches_every_rank_with_results_by_rank_and_coords(mesh: ProcMesh) -> None:
    echoes = mesh.spawn("all", Echo, "t")
    results = echoes.who.call([1, 2])
    assert list(results) == [0, 1, 2, 3]
    assert [r["coords"] for r in results.values()] == ["hosts=0,gpus=0", "hosts=0,gpus=1", "hosts=1,gpus=0",
                                                       "hosts=1,gpus=1"]
    assert all(r["value"] == [1, 2] and r["tag"] == "t" for r in results.values())
    assert results.at(hosts=1, gpus=0)["rank"] == 2
    assert len({r["pid"] for r in results.values()}) == 4


def test_call_one_and_slices(mesh: ProcMesh) -> None:
    echoes = mesh.spawn("some", Echo, "s")
    assert echoes.who.call_one("x", rank=3)["rank"] == 3
    assert list(echoes.slice(hosts=0).who.call()) == [0, 1]
    assert list(echoes.slice(gpus=1).who.call()) == [1, 3]
    assert echoes.slice(hosts=1, gpus=1).who.call_one()["rank"] == 3
    only_host1 = mesh.slice(hosts=1).spawn("host1", Echo, "h")
    assert list(only_host1.who.call()) == [2, 3]
    with pytest.raises(UsageError, match="not in this actor mesh"):
        only_host1.who.call_one(rank=0)
    with pytest.raises(UsageError, match="needs rank="):
        echoes.who.call_one()
    with pytest.raises(UsageError, match="unknown mesh dimension"):
        echoes.slice(nodes=0)


def test_remote_exception_carries_rank_coords_and_traceback(mesh: ProcMesh) -> None:
    echoes = mesh.spawn("errors", Echo, "e")
    with pytest.raises(ActorError) as caught:
        echoes.fail_on.call(2)
    error = caught.value
    assert error.rank == 2 and error.coords == {"hosts": 1, "gpus": 0}
    assert error.type == "builtins.ValueError" and error.message == "rank 2 refuses"
    assert 'mesh_actors.py", line' in error.remote_traceback and "in fail_on" in error.remote_traceback
    assert "worker/mesh/actor.py" not in error.remote_traceback
    assert echoes.fail_on.call(-1) == {0: 0, 1: 0, 2: 0, 3: 0}  # the actors survive an error


def test_only_endpoints_and_importable_classes(mesh: ProcMesh) -> None:
    echoes = mesh.spawn("rules", Echo, "r")
    with pytest.raises(AttributeError, match="not an @endpoint"):
        echoes.private  # noqa: B018

    class Local:
        pass

    with pytest.raises(UsageError, match="importable module"):
        mesh.spawn("local", Local)
    with pytest.raises(ActorError, match="already lives"):
        mesh.spawn("rules", Echo, "again")
