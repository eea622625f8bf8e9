"""Process meshes from the launcher's side: spawn ranks, prefix their output, host the driver API.

    from meshdbg.debugger.mesh import proc_mesh     (also `meshdbg.proc_mesh`)
    from meshdbg.worker.mesh import endpoint        (also `meshdbg.endpoint`)

    mesh = proc_mesh(hosts=2, gpus=4)
    trainers = mesh.spawn("trainer", Trainer, cfg)
    losses = trainers.step.call(batch)

Everything here runs in the launcher or the driver, never in a worker. Importing this package
imports nothing heavy; the names load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProcMesh", "ActorMesh", "MeshResults", "proc_mesh"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from meshdbg.debugger.mesh import procmesh

        return getattr(procmesh, name)
    raise AttributeError(f"module 'meshdbg.debugger.mesh' has no attribute {name!r}")
