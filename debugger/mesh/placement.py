"""Placement: which ranks each host runs, and the plan (meshdbg.host.plan) it gets. Pure logic.

The first mesh dimension is the host dimension when there are several hosts: with
`--mesh hosts=2,gpus=4`, host 1 runs ranks 4-7. A single-host run places every rank on host 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from meshdbg.host.plan import HostPlan, RankPlan
from meshdbg.wire.coords import format_coords
from meshdbg.wire.environment import POST_MORTEM
from meshdbg.wire.errors import UsageError
from meshdbg.debugger.mesh.shape import MeshShape, rank_env


@dataclass(frozen=True)
class Target:
    """What every rank runs and how it reaches the server: the same on every host."""

    argv: list[str]
    cwd: str
    name: str
    addr: str
    token: str
    fingerprint: str
    post_mortem: bool
    sys_path: list[str] | None = None
    breakpoints: bool = True  # False: the run's PYTHONBREAKPOINT=0 (breakpoint() does nothing in its ranks)


def host_ranks(shape: MeshShape, hosts: int, index: int) -> range:
    """The ranks host `index` of `hosts` runs: a contiguous block of the row-major ranks."""
    if hosts == 1:
        return range(shape.size)
    dim, size = shape.dims[0]
    if size != hosts:
        raise UsageError(f"the mesh's first dimension ({dim}={size}) is its host dimension: it must be {hosts}, "
                         f"the number of hosts")
    per_host = shape.size // hosts
    return range(index * per_host, (index + 1) * per_host)


def plan_host(shape: MeshShape, hosts: int, index: int, target: Target, master_addr: str, master_port: int) -> HostPlan:
    """The plan of host `index`: its ranks, each with its environment."""
    ranks = tuple(RankPlan(rank, f"r{rank} {format_coords(shape.coords(rank))}", dict(
        rank_env(shape, rank, name=target.name, addr=target.addr, token=target.token, master_addr=master_addr,
                 master_port=master_port, fingerprint=target.fingerprint, breakpoints=target.breakpoints),
        **{POST_MORTEM.name: "1" if target.post_mortem else "0"})) for rank in host_ranks(shape, hosts, index))
    return HostPlan(index, target.argv, target.cwd, ranks, target.sys_path)


class Joined(Protocol):
    """What ordering needs of a joined host."""

    hostname: str
    address: str
    hint: int | None


H = TypeVar("H", bound=Joined)


def order_hosts(hosts: list[H]) -> list[H]:
    """Hosts by index: those with an index hint (--index, SLURM_NODEID, ...) by it, then the
    others by (hostname, address), which every run orders the same way."""
    return sorted(hosts, key=lambda h: (h.hint is None, h.hint or 0, h.hostname, h.address))
