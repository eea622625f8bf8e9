"""Process meshes: launch workers with ranks and coordinates, host actors, debug them all.

    from worker.mesh import proc_mesh, endpoint

    mesh = proc_mesh(hosts=2, gpus=4)
    trainers = mesh.spawn("trainer", Trainer, cfg)
    losses = trainers.step.call(batch)

Importing this package imports nothing heavy; the names load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProcMesh", "ActorMesh", "MeshResults", "proc_mesh", "endpoint"]


def __getattr__(name: str) -> Any:
    if name == "endpoint":
        from worker.mesh.actor import endpoint

        return endpoint
    if name in __all__:
        from worker.mesh import procmesh

        return getattr(procmesh, name)
    raise AttributeError(f"module 'worker.mesh' has no attribute {name!r}")
