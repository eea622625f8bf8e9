"""A real Slurm on the namespace hosts (TESTING.md section 4): slurmctld on `c`, slurmd on the others.

munged runs in the root namespace (its socket is a path every namespace shares) from a folder
of its own; every Slurm state, spool, pid and log file lives in the test's folder. The daemons
die with their namespaces (Cluster.teardown); munged is stopped by its pid.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from e2e import wait_for
from netns import Cluster

CONF = """ClusterName=meshdbg
SlurmctldHost={controller}({controller_addr})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool-%n
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd-%n.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd-%n.log
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
{nodes}
PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


@contextmanager
def slurm(cluster: Cluster, controller: str, nodes: list[str], folder: Path) -> Iterator[dict[str, str]]:
    """Slurm up on `cluster`; yields the environment its commands need (SLURM_CONF)."""
    for program in ("munged", "slurmctld", "slurmd", "salloc"):
        if shutil.which(program) is None:
            raise RuntimeError(f"{program} is missing: apt-get install slurmctld slurmd slurm-client munge")
    munge = Path(tempfile.mkdtemp(prefix="meshdbg-munge-"))  # not under pytest's 0700 folder: munged must reach it
    os.chmod(munge, 0o711)
    shutil.chown(munge, "munge")
    socket = munge / "munge.socket.2"
    subprocess.run(["runuser", "-u", "munge", "--", "munged", f"--socket={socket}", f"--pid-file={munge}/munged.pid",
                    f"--log-file={munge}/munged.log", f"--seed-file={munge}/seed", "--key-file=/etc/munge/munge.key"],
                   check=True, timeout=20)
    try:
        (folder / "state").mkdir(parents=True)
        conf = folder / "slurm.conf"
        conf.write_text(CONF.format(
            controller=controller, controller_addr=cluster.address(controller), socket=socket, folder=folder,
            names=",".join(nodes), nodes="\n".join(f"NodeName={n} NodeAddr={cluster.address(n)} CPUs=2 State=UNKNOWN"
                                                  for n in nodes)))
        env = dict(os.environ, SLURM_CONF=str(conf))
        cluster.start(controller, ["slurmctld", "-D", "-f", str(conf)], env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL)
        for node in nodes:
            cluster.start(node, ["slurmd", "-D", "-N", node, "-f", str(conf)], env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
        wait_for(lambda: cluster.run(controller, ["sinfo", "-h", "-o", "%T %D"], env).stdout.split() == ["idle",
                                                                                                    str(len(nodes))],
                 20, "every slurmd idle")
        yield env
    finally:
        try:
            os.kill(int((munge / "munged.pid").read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass
        shutil.rmtree(munge, ignore_errors=True)
