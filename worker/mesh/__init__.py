"""Process meshes from a worker's side: the bootstrap every rank runs, its agent, actor hosting.

    from meshdbg.worker.mesh import endpoint

    class Trainer:
        @endpoint
        def step(self, batch): ...

The driver's side (`proc_mesh`, the launcher) is meshdbg.debugger.mesh. Importing this package
imports nothing heavy; `endpoint` loads on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["endpoint"]


def __getattr__(name: str) -> Any:
    if name == "endpoint":
        from meshdbg.worker.mesh.actor import endpoint

        return endpoint
    raise AttributeError(f"module 'meshdbg.worker.mesh' has no attribute {name!r}")
