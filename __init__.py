"""meshdbg: a distributed debugger for Python process meshes.

    PYTHONBREAKPOINT=meshdbg.set_trace python train.py      (or meshdbg.worker.remote_breakpointhook)
    meshdbg.set_trace()                                       a remote breakpoint, like pdb.set_trace()
    mesh = meshdbg.proc_mesh(hosts=2, gpus=4)                  a process mesh with actors

The package is laid out in layers: `meshdbg.wire` (protocol, connection, errors) under both
`meshdbg.worker` (runs inside every worker; imports nothing of the central side) and
`meshdbg.debugger` (the server, console, CLI and launcher). Importing this package imports
none of them: each name loads on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_trace", "install", "proc_mesh", "endpoint"]


def __getattr__(name: str) -> Any:
    if name in ("set_trace", "install"):
        from meshdbg import worker  # (an attribute, not `from worker import`: its AttributeError stays one)

        return worker.remote_breakpointhook if name == "set_trace" else worker.install
    if name == "endpoint":
        from meshdbg.worker.mesh.actor import endpoint

        return endpoint
    if name == "proc_mesh":
        from meshdbg.debugger.mesh.procmesh import proc_mesh

        return proc_mesh
    raise AttributeError(f"module 'meshdbg' has no attribute {name!r}")
