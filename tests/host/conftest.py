"""A cluster of network-namespace hosts per test (netns.py), and a multi-host `meshdbg run` on it."""

from __future__ import annotations

import os
import secrets
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

from e2e import wait_for
from netns import HOST_SCRIPTS, Cluster, meshdbg

@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """The run's host `c` (198.18.0.1) and two hosts `h1`, `h2` (.2, .3); torn down on every path."""
    with Cluster.build(["c", "h1", "h2"], tmp_path) as built:
        yield built


@dataclass
class MultiRun:
    """`meshdbg run --on join` on host c and one `meshdbg host` agent per other host."""

    cluster: Cluster
    folder: Path
    env: dict[str, str]
    process: subprocess.Popen
    url: str = ""
    agents: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def stderr(self) -> str:
        return (self.folder / "run.err").read_text(errors="replace")

    @property
    def stdout(self) -> str:
        return (self.folder / "run.out").read_text(errors="replace")

    def join(self, *hosts: str, extra: tuple[str, ...] = (), host_env: dict[str, dict[str, str]] | None = None) -> None:
        """Start an agent on each of `hosts`, dialling the URL the run printed (`host_env`: more
        environment for some hosts' agents, as their placer would set)."""
        def printed_url() -> str:
            if self.process.poll() is not None:
                raise AssertionError(f"the run exited ({self.process.returncode}) before its join line: {self.stderr!r}")
            return next((word for word in self.stderr.split() if word.startswith("meshdbg://")), "")

        try:
            self.url = wait_for(printed_url, 20, "the join line on the run's stderr")
        except AssertionError as exc:  # say what the run did print
            raise AssertionError(f"{exc}; its stderr so far: {self.stderr!r}") from None
        for host in hosts:
            with open(self.folder / f"{host}.err", "w") as err:
                self.agents[host] = self.cluster.start(host, meshdbg("host", "--join", self.url, *extra),
                                                       {**self.env, **(host_env or {}).get(host, {})},
                                                       stdout=err, stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)

    def cli(self, host: str, *args: str, timeout: float = 20) -> subprocess.CompletedProcess:
        """`meshdbg ARGS` on `host`, finding the run by its URL and the token alone."""
        return self.cluster.run(host, meshdbg(*args), dict(self.env, MESHDBG_ADDR=self.url), timeout=timeout)

    def finish(self, timeout: float = 30) -> int:
        return self.process.wait(timeout=timeout)


@pytest.fixture
def multi_run(cluster: Cluster, tmp_path: Path):
    """Start `meshdbg run --on join --bind 198.18.0.1 ARGS` on host c."""
    env = dict(os.environ, MESHDBG_TOKEN=secrets.token_urlsafe(24), PYTHONUNBUFFERED="1")
    for key in ("MESHDBG_ADDR", "MESHDBG_CONNECTION_FILE", "RANK", "MESHDBG_RANK"):
        env.pop(key, None)

    def start(*args: str) -> MultiRun:
        with open(tmp_path / "run.out", "w") as out, open(tmp_path / "run.err", "w") as err:
            process = cluster.start("c", meshdbg("run", "--on", "join", "--bind", cluster.address("c"), *args), env,
                                    stdout=out, stderr=err, cwd=HOST_SCRIPTS)
        return MultiRun(cluster, tmp_path, env, process)

    return start
