"""sshd on namespace hosts, and a client configuration that reaches them with a key of the test's.

sshd (Debian's openssh-server, installed by .ci/run) runs on each host with a host key, an
authorized key and a configuration made in the test's folder; nothing of the machine's own ssh
setup is used or changed. `client_config` is what `ssh` reads on the run's host: the test
binds it over /etc/ssh/ssh_config inside that host's own mount namespace.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from e2e import wait_for
from netns import Cluster

SERVER = """Port 22
ListenAddress 0.0.0.0
HostKey {folder}/host_key
AuthorizedKeysFile {folder}/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
"""
CLIENT = """Host *
  User root
  IdentityFile {folder}/id
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
"""


def start_sshd(cluster: Cluster, hosts: list[str], folder: Path) -> Path:
    """sshd on each of `hosts`; returns the client configuration that logs in to them."""
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(sshd):
        raise RuntimeError("sshd is missing: apt-get install openssh-server")
    folder.mkdir(parents=True, exist_ok=True)
    for key in ("host_key", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / key)], check=True, timeout=20)
    shutil.copy(folder / "id.pub", folder / "authorized_keys")
    (folder / "sshd_config").write_text(SERVER.format(folder=folder))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    for host in hosts:
        with open(folder / f"sshd-{host}.log", "w") as log:
            cluster.start(host, [sshd, "-D", "-e", "-f", str(folder / "sshd_config")], dict(os.environ),
                          stdout=subprocess.DEVNULL, stderr=log)
    for host in hosts:
        wait_for(lambda: "Server listening" in (folder / f"sshd-{host}.log").read_text(), 10, f"sshd on {host}")
    config = folder / "ssh_config"
    config.write_text(CLIENT.format(folder=folder))
    return config
