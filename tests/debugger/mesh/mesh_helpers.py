"""Helpers for the mesh tests: a `meshdbg run` in the background and the CLI pointed at it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from unittest import mock

from meshdbg.wire.connection import ConnectionInfo, resolve_connection
from e2e import wait_for

SCRIPTS = Path(__file__).parent / "scripts"


Cli = Callable[..., subprocess.CompletedProcess]  # `meshdbg ARGS` against one server


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name: state, parent pid, ..."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def pid_gone(pid: int) -> bool:
    """No such process, or only a zombie left for its new parent to reap."""
    try:
        return _stat(pid)[0] == "Z"
    except FileNotFoundError:
        return True


def parent_pid(pid: int) -> int:
    return int(_stat(pid)[1])


def list_workers(cli: Cli) -> list[dict]:
    """`list --all --json`: every worker (none while the server does not answer)."""
    result = cli("list", "--all", "--json")
    return json.loads(result.stdout) if result.returncode == 0 else []


def wait_workers(cli: Cli, predicate, what: str, timeout: float = 15) -> dict[int, dict]:
    """Poll `list --all` until predicate(workers by rank) holds."""
    def check() -> dict[int, dict] | None:
        by_rank = {w["rank"]: w for w in list_workers(cli)}
        return by_rank if by_rank and predicate(by_rank) else None

    return wait_for(check, timeout, what)


@dataclass
class Run:
    """A `meshdbg run` started in the background, with the environment its clients need."""

    process: subprocess.Popen
    env: dict[str, str]

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """`meshdbg ARGS` from the folder the run started in, as a person would type it beside it."""
        return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=self.env, capture_output=True,
                              text=True, timeout=20, cwd=SCRIPTS)

    def wait_workers(self, predicate, what: str, timeout: float = 15) -> dict[int, dict]:
        return wait_workers(self.cli, predicate, what, timeout)

    def connection(self) -> ConnectionInfo:
        """The server's address and token, found as a client in this run's environment finds them."""
        with mock.patch.dict(os.environ, self.env, clear=True):
            return resolve_connection()

    def finish(self, timeout: float = 30) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=10)


def client_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"))
    for key in ("MESHDBG_ADDR", "MESHDBG_TOKEN", "MESHDBG_RANK", "RANK"):
        env.pop(key, None)
    return env


def start_run(tmp_path: Path, *args: str, env_extra: dict[str, str] | None = None, own_group: bool = False) -> Run:
    """`meshdbg run ARGS` in SCRIPTS (`own_group`: in a process group of its own, which a
    test's `os.killpg` then reaches as a terminal's Ctrl-C reaches its foreground job)."""
    env = {**client_env(tmp_path), **(env_extra or {})}
    process = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", *args], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRIPTS,
                               process_group=0 if own_group else None)
    return Run(process, env)


def all_in(state: str, size: int):
    return lambda by_rank: len(by_rank) == size and all(w["state"] == state for w in by_rank.values())


def torchrun(env: dict[str, str], nproc: int, *target: str, **extra: str) -> subprocess.Popen:
    """torchrun --standalone of TARGET in SCRIPTS with the breakpoint hook set (and `extra`),
    through torchrun's own entry point (torch.distributed.run:main) run with this interpreter
    rather than a version-manager shim on PATH."""
    import pytest

    pytest.importorskip("torch")
    env = {**env, "PYTHONBREAKPOINT": "meshdbg.worker.remote_breakpointhook", "PYTHONUNBUFFERED": "1", **extra}
    for key in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT", "MESHDBG_RANK"):
        env.pop(key, None)
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}",
                             *target], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=SCRIPTS, start_new_session=True)
