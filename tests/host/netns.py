"""Several "hosts" on one machine: network namespaces on a bridge (TESTING.md section 4).

    with Cluster.build(["c", "h1", "h2"], tmp_path) as cluster:   # c: 198.18.0.1, h1: .2, h2: .3
        run = cluster.start("c", ["meshdbg", "run", ...], env)     # with its own hostname and /etc/hosts
        cluster.kill_all("h2")                                     # a host dies
        cluster.link_down("h1")                                    # a silent partition

A "switch" namespace holds a bridge; each host gets a veth into it and an address on
198.18.0.0/24 (RFC 2544's benchmarking range), no default route, and its own loopback, so a
rank that wrongly dials 127.0.0.1 reaches nothing. Nothing is added to the root namespace.
Every namespace is named with a prefix unique to this run and torn down on every path:
its processes killed by pid (`ip netns pids`), then the namespace deleted. Building needs
root; it fails (never skips) when it cannot.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

SUBNET = "198.18.0"
HOST_SCRIPTS = Path(__file__).parent / "scripts"  # what the tests' ranks run
ENTER = ('mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"')


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()} (these tests need root and iproute2)")


class Cluster:
    """Host namespaces on one bridge; `address(name)` is each one's IP."""

    def __init__(self, prefix: str, names: list[str], folder: Path) -> None:
        self.prefix = prefix
        self.names = names
        self.folder = folder
        self.hosts_file = folder / "hosts"
        self.processes: list[subprocess.Popen] = []

    @classmethod
    def build(cls, names: list[str], folder: Path) -> "Cluster":
        cluster = cls(f"mdbg{os.getpid()}x{os.urandom(2).hex()}", names, folder)
        try:
            cluster._build()
        except BaseException:
            cluster.teardown()
            raise
        return cluster

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def address(self, name: str) -> str:
        return f"{SUBNET}.{self.names.index(name) + 1}"

    def _build(self) -> None:
        switch = self.ns("sw")
        _ip("netns", "add", switch)
        _ip("-n", switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", switch, "link", "set", "br0", "up")
        for number, name in enumerate(self.names, 1):
            _ip("netns", "add", self.ns(name))
            _ip("-n", switch, "link", "add", f"v{number}", "type", "veth", "peer", "name", "eth0", "netns", self.ns(name))
            _ip("-n", switch, "link", "set", f"v{number}", "master", "br0", "up")
            _ip("-n", self.ns(name), "addr", "add", f"{self.address(name)}/24", "dev", "eth0")
            _ip("-n", self.ns(name), "link", "set", "eth0", "up")
            _ip("-n", self.ns(name), "link", "set", "lo", "up")
        self.hosts_file.write_text("127.0.0.1 localhost\n" + "".join(f"{self.address(n)} {n}\n" for n in self.names))

    def command(self, name: str, argv: list[str]) -> list[str]:
        """`argv` run on host `name`: its network namespace, hostname and /etc/hosts."""
        return ["nsenter", f"--net=/run/netns/{self.ns(name)}", "unshare", "--uts", "--mount", "--propagation",
                "private", "sh", "-c", ENTER, str(self.hosts_file), name, *argv]

    def start(self, name: str, argv: list[str], env: dict[str, str], **popen: object) -> subprocess.Popen:
        """Start `argv` on host `name` (its pid is the command's: nsenter, unshare and sh exec)."""
        popen.setdefault("stdin", subprocess.DEVNULL)
        process = subprocess.Popen(self.command(name, argv), env=env, **popen)
        self.processes.append(process)
        return process

    def run(self, name: str, argv: list[str], env: dict[str, str], timeout: float = 20) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(name, argv), env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def pids(self, name: str) -> list[int]:
        """Every process in host `name`'s network namespace."""
        done = subprocess.run(["ip", "netns", "pids", self.ns(name)], capture_output=True, text=True, timeout=10)
        return [int(pid) for pid in done.stdout.split()]

    def kill_all(self, name: str) -> None:
        """The host dies: SIGKILL every process in its namespace."""
        for pid in self.pids(name):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def link_down(self, name: str) -> None:
        """A silent partition: the host's link goes down, its processes run on."""
        _ip("-n", self.ns(name), "link", "set", "eth0", "down")

    def teardown(self) -> None:
        """Kill every process of every namespace, then delete the namespaces (whatever exists)."""
        existing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=10).stdout
        ours = [line.split()[0] for line in existing.splitlines() if line.startswith(f"{self.prefix}-")]
        for namespace in ours:
            self.kill_all(namespace.removeprefix(f"{self.prefix}-"))
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
        deadline = time.monotonic() + 5
        for namespace in ours:
            while self.pids(namespace.removeprefix(f"{self.prefix}-")) and time.monotonic() < deadline:
                time.sleep(0.05)
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=10)

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.teardown()


def meshdbg(*args: str) -> list[str]:
    """The argv of `meshdbg ARGS` with this test's Python."""
    return [sys.executable, "-m", "meshdbg", *args]


def lines_of(path: Path) -> Iterator[str]:
    return iter(path.read_text(errors="replace").splitlines()) if path.exists() else iter(())
