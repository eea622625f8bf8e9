"""`--on slurm`: inside an allocation, one `meshdbg host` agent per node, started with srun.

    salloc -N2 meshdbg run --on slurm --mesh hosts=2,gpus=4 train.py     (or in an sbatch script)

The run starts `srun --nodes=H --ntasks-per-node=1 --whole --kill-on-bad-exit=1 meshdbg host
--join URL` (the step gets all of each node's allocated CPUs, so the ranks are not pinned to one
task's share; the token travels in the environment srun propagates, never in argv). Each agent's
index is its SLURM_NODEID. The step ends when the run does; it is killed if it does not.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import TYPE_CHECKING

from meshdbg.debugger.mesh.remote import JoinPlacer, end_within
from meshdbg.wire.environment import TOKEN
from meshdbg.wire.errors import UsageError
from meshdbg.wire.logs import logger, said

if TYPE_CHECKING:
    from meshdbg.debugger.mesh.launcher import MeshLauncher

log = logger(__name__)
STEP_END_S = 5.0


def allocation_nodes() -> list[str]:
    """The node names of the allocation this process runs in; UsageError outside one."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not os.environ.get("SLURM_JOB_ID") or not nodelist:
        raise UsageError("--on slurm runs inside an allocation: salloc -N2 meshdbg run --on slurm ..., or in an "
                         "sbatch script")
    try:
        names = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                               check=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"cannot list the allocation's nodes with scontrol ({exc})") from None
    return names


class SlurmPlacer(JoinPlacer):
    """A JoinPlacer whose agents srun starts, one per node of the allocation."""

    name = "slurm"

    def __init__(self, hosts: int, wait_s: float, nodes: list[str]) -> None:
        super().__init__(hosts, wait_s)
        if len(nodes) < hosts:
            raise UsageError(f"the allocation has {len(nodes)} node(s) ({','.join(nodes)}) for a mesh of {hosts} hosts")
        self._step: asyncio.subprocess.Process | None = None

    async def start_agents(self, launcher: "MeshLauncher") -> None:
        argv = ["srun", f"--nodes={self.expected}", "--ntasks-per-node=1", "--whole", "--kill-on-bad-exit=1",
                sys.executable, "-m", "meshdbg", "host", "--join", launcher.server.connection.join]
        env = {**os.environ, TOKEN.name: launcher.server.token}
        said(log, f"meshdbg: starting {self.expected} host agents: {' '.join(argv[:5])} meshdbg host ...")
        try:
            self._step = await asyncio.create_subprocess_exec(*argv, env=env, stdin=subprocess.DEVNULL,
                                                              stdout=sys.stderr.fileno(), stderr=sys.stderr.fileno())
        except OSError as exc:
            raise UsageError(f"cannot start srun: {exc.strerror}") from None
        self.fail_if_gone(self._step, "srun")

    async def close(self) -> None:
        if self._step is not None:
            await end_within(self._step, STEP_END_S)
