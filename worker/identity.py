"""Who this worker is: rank, mesh coordinates and name, from meshdbg or another launcher.

Detection order (DESIGN §3): MESHDBG_* → torchrun → Open MPI → MPICH/PMI → `RANK` → SLURM.
Under `srun torchrun`, torchrun's variables win because they come first. Other launchers give
coordinates `{"hosts": node, "gpus": local_rank}`.

`RANK` alone is torch.distributed's `env://` convention, which launchers other than torchrun
set (DeepSpeed's, a job's own spawner that sets `os.environ["RANK"]` in each child): without
it every such process was rank 0. It comes before SLURM, whose task may hold several ranks
(`srun` one task a node, each spawning a process per GPU).
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass, field
from typing import Mapping

from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.text import wire_text
from meshdbg.wire.coords import RANK_LIMIT, bounded_int, pb_coords, shown
from meshdbg.wire.environment import COORDS, NAME, RANK
from meshdbg.wire.errors import UsageError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import StopReason, wire_value


@dataclass(frozen=True)
class WorkerIdentity:
    """A worker's place in the job, independent of the thread that stops."""

    name: str
    rank: int
    coords: dict[str, int] = field(default_factory=dict)
    launcher: str = "none"


NAME_LIMIT = 256  # characters of MESHDBG_NAME kept: identities stay small on the wire


def _int(env: Mapping[str, str], key: str, default: str = "0") -> int:
    """A whole number from `env`, as the wire's int32 carries it; UsageError otherwise."""
    value = env.get(key, default)
    number = bounded_int(value.strip())
    if number is None:
        raise UsageError(f"{key}={shown(value)} is not a whole number below {RANK_LIMIT}")
    return number


def _mesh(rank: int, node: int, local: int) -> tuple[int, dict[str, int]]:
    return rank, {"hosts": node, "gpus": local}


def detect_identity(env: Mapping[str, str] | None = None) -> WorkerIdentity:
    """This process's identity from its environment; rank 0 with no coordinates if none."""
    env = os.environ if env is None else env
    name = wire_text(NAME.get(env)[:NAME_LIMIT]) or NAME.default
    rank = RANK.get(env)
    if rank is not None:
        return WorkerIdentity(name, rank, dict(COORDS.get(env)), "meshdbg")  # never the shared default
    if "TORCHELASTIC_RUN_ID" in env and "RANK" in env:
        rank, coords = _mesh(_int(env, "RANK"), _int(env, "GROUP_RANK"), _int(env, "LOCAL_RANK"))
        return WorkerIdentity(name, rank, coords, "torchrun")
    if "OMPI_COMM_WORLD_RANK" in env:
        rank = _int(env, "OMPI_COMM_WORLD_RANK")
        per_node = max(1, _int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", "1"))
        node = _int(env, "OMPI_COMM_WORLD_NODE_RANK") if "OMPI_COMM_WORLD_NODE_RANK" in env else rank // per_node
        return WorkerIdentity(name, *_mesh(rank, node, _int(env, "OMPI_COMM_WORLD_LOCAL_RANK")), "openmpi")
    if "PMI_RANK" in env:
        rank = _int(env, "PMI_RANK")
        per_node = max(1, _int(env, "MPI_LOCALNRANKS", "1"))
        return WorkerIdentity(name, *_mesh(rank, rank // per_node, _int(env, "MPI_LOCALRANKID")), "mpich")
    if "RANK" in env:
        rank = _int(env, "RANK")
        return WorkerIdentity(name, rank, _env_coords(env, rank), "env")
    if "SLURM_PROCID" in env:
        rank, coords = _mesh(_int(env, "SLURM_PROCID"), _int(env, "SLURM_NODEID"), _int(env, "SLURM_LOCALID"))
        return WorkerIdentity(name, rank, coords, "slurm")
    return WorkerIdentity(name, 0)


def _env_coords(env: Mapping[str, str], rank: int) -> dict[str, int]:
    """The coordinates the `env://` variables give, as far as they go: `gpus` from LOCAL_RANK,
    `hosts` from GROUP_RANK or NODE_RANK, else from LOCAL_WORLD_SIZE (none without LOCAL_RANK)."""
    if "LOCAL_RANK" not in env:
        return {}
    local = _int(env, "LOCAL_RANK")
    for node in ("GROUP_RANK", "NODE_RANK"):
        if node in env:
            return {"hosts": _int(env, node), "gpus": local}
    if "LOCAL_WORLD_SIZE" in env:
        return {"hosts": rank // max(1, _int(env, "LOCAL_WORLD_SIZE")), "gpus": local}
    return {"gpus": local}


def session_identity(worker: WorkerIdentity, reason: StopReason | None, context: Mapping[str, str] | None = None) -> pb.Identity:
    """The wire identity of a session opened by the calling thread."""
    thread = threading.current_thread()
    return pb.Identity(
        name=worker.name, rank=worker.rank,
        coords=pb_coords(worker.coords),
        hostname=wire_text(socket.gethostname()), pid=os.getpid(), thread_id=threading.get_native_id(),
        thread_name=wire_text(thread.name[:NAME_LIMIT]), reason=wire_value(reason), protocol_version=PROTOCOL_VERSION, context={wire_text(k): wire_text(v) for k, v in (context or {}).items()},
    )
