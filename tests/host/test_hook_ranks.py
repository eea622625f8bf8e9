"""`meshdbg serve` on one host, and ranks of another launcher on two others that set only the
breakpoint hook (no agent stream, so no pid of theirs can be watched from the server's host):
each rank's exit is known all the same, from the session streams its process parks between
its stops (meshdbg.debugger.hook_processes): a normal exit closes them, a host that dies
breaks them. `list --all` on the server's host lists them exited; before, they stayed
"running" for good there, in the console's counts and in an IDE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from e2e import SCRIPTS, wait_for
from netns import Cluster, meshdbg

TOKEN = "hook-ranks-token"
LISTED_S = 20


@pytest.fixture
def served(cluster: Cluster, tmp_path: Path) -> Iterator[dict[str, str]]:
    """`meshdbg serve` on host c, reachable from the others: the environment that finds it."""
    env = dict(os.environ, MESHDBG_TOKEN=TOKEN, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"))
    server = cluster.start("c", meshdbg("serve", "--host", cluster.address("c"), "--port", "0"), env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addr = server.stdout.readline().strip()
    assert addr, f"serve did not start: {server.stderr.read()}"
    yield dict(env, MESHDBG_ADDR=addr)
    server.terminate()
    server.communicate(timeout=20)


def listed(cluster: Cluster, env: dict[str, str]) -> list[tuple[int, str, str]]:
    """(rank, state, host) of each process `list --all --json` shows on the server's host."""
    done = cluster.run("c", meshdbg("list", "--all", "--json"), env)
    assert done.returncode == 0, done.stderr
    return [(w["rank"], w["state"], w["hostname"]) for w in json.loads(done.stdout)]


def test_hook_ranks_on_other_hosts_are_listed_exited_once_their_processes_end(cluster: Cluster, served: dict[str, str],
                                                                              tmp_path: Path) -> None:
    hook = dict(served, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook", PYTHONUNBUFFERED="1")
    cluster.start("h1", [sys.executable, str(SCRIPTS / "hold.py")], dict(hook, MESHDBG_RANK="1"),
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # stops once, then exits
    cluster.start("h2", [sys.executable, str(SCRIPTS / "stops_again.py"), "2", "1", str(tmp_path / "never")],
                  dict(hook, MESHDBG_RANK="2"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # runs on
    wait_for(lambda: listed(cluster, served) == [(1, "stopped", "h1"), (2, "stopped", "h2")], LISTED_S,
             "both ranks listed stopped")

    assert cluster.run("c", meshdbg("continue"), served).returncode == 0
    wait_for(lambda: listed(cluster, served) == [(1, "exited", "h1"), (2, "running", "h2")], LISTED_S,
             "rank 1 exited, rank 2 running")
    cluster.kill_all("h2")  # its host dies with it
    wait_for(lambda: listed(cluster, served) == [(1, "exited", "h1"), (2, "exited", "h2")], LISTED_S,
             "rank 2 exited with its host")
