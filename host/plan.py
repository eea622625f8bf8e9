"""What one host runs: its ranks, each one's environment, and the target (torch's WorkerSpec).

Made by the central `run` (meshdbg.debugger.mesh.placement) and carried out by a HostAgent,
in the same process for a single-host run, or sent to a `meshdbg host` agent on another node
(`to_pb` / `from_pb`). A rank's `env` holds only what is its own (MESHDBG_*, RANK, ...); the
agent lays it over its host's environment, so PATH and the like stay the node's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meshdbg.wire.proto import host_pb2 as host_pb


@dataclass(frozen=True)
class RankPlan:
    """One rank: its number, the label that prefixes its output (`r3 hosts=0,gpus=3`), its env."""

    rank: int
    label: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HostPlan:
    """Every rank one host runs, and how: argv of the bootstrap, working directory, sys.path."""

    index: int
    argv: list[str]
    cwd: str
    ranks: tuple[RankPlan, ...]
    sys_path: list[str] | None = None  # the workers' sys.path (None: the bootstrap sets it as python does)

    def to_pb(self) -> host_pb.HostPlan:
        return host_pb.HostPlan(index=self.index, argv=self.argv, cwd=self.cwd, ranks=[
            host_pb.HostRank(rank=r.rank, label=r.label, env=r.env) for r in self.ranks])

    @classmethod
    def from_pb(cls, plan: host_pb.HostPlan) -> "HostPlan":
        return cls(plan.index, list(plan.argv), plan.cwd,
                   tuple(RankPlan(r.rank, r.label, dict(r.env)) for r in plan.ranks))
