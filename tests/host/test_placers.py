"""Agents placed by the site's own engine: torchrun --nnodes 2 runs one `meshdbg host` per node."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import SCRIPTS
from e2e import wait_for


@pytest.mark.torch
@pytest.mark.timeout(120)
def test_torchrun_places_one_agent_per_node(multi_run, cluster, tmp_path) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=2", "where.py")
    run.join()
    endpoint = f"{cluster.address('h1')}:29400"
    torchruns = {}
    for host in ("h1", "h2"):
        with open(tmp_path / f"torchrun-{host}.log", "w") as log:
            torchruns[host] = cluster.start(host, [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
                                                   "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint",
                                                   endpoint, "-m", "meshdbg", "host", "--join", run.url],
                                            run.env, stdout=log, stderr=subprocess.STDOUT, cwd=SCRIPTS)
    sessions = wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0
                        and len(json.loads(r.stdout)) == 4 and json.loads(r.stdout), 60, "4 ranks stopped")
    hosts = json.loads(run.cli("h1", "hosts", "--json").stdout)
    assert sorted(h["hostname"] for h in hosts) == ["h1", "h2"] and [h["index"] for h in hosts] == [0, 1]
    by_host = {h["hostname"]: h["ranks"] for h in hosts}
    assert {s["rank"]: s["hostname"] for s in sessions} == {r: name for name, ranks in by_host.items() for r in ranks}
    assert run.cli("h1", "continue").returncode == 0
    assert run.finish(timeout=30) == 0, run.stderr
    index_of = {h["hostname"]: h["index"] for h in hosts}  # torchrun's GROUP_RANK, the agents' index hint
    for host, torchrun in torchruns.items():
        log = (tmp_path / f"torchrun-{host}.log").read_text()
        assert torchrun.wait(timeout=30) == 0, log
        assert f"meshdbg host: host {index_of[host]}," in log
