"""Agents placed by the site's own engine: torchrun --nnodes 2, `--on slurm` with a real Slurm, `--on ssh`."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest

from e2e import wait_for
from netns import HOST_SCRIPTS, meshdbg
from slurm import slurm
from sshd import start_sshd


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
                                            run.env, stdout=log, stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)
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


def test_an_indexed_jobs_completion_index_is_the_host_index(multi_run, tmp_path) -> None:
    """Agents started as the README's Kubernetes Indexed Job starts them: `meshdbg host --join URL`
    with MESHDBG_TOKEN and JOB_COMPLETION_INDEX in the environment (here against name order)."""
    run = multi_run("--mesh", "hosts=2,gpus=1", "where.py")
    run.join("h1", "h2", host_env={"h1": {"JOB_COMPLETION_INDEX": "1"}, "h2": {"JOB_COMPLETION_INDEX": "0"}})
    sessions = wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0
                        and len(json.loads(r.stdout)) == 2 and json.loads(r.stdout), 30, "2 ranks stopped")
    assert {s["rank"]: s["hostname"] for s in sessions} == {0: "h2", 1: "h1"}
    assert "meshdbg host: host 0, rank 0" in (tmp_path / "h2.err").read_text()
    assert run.cli("h1", "continue").returncode == 0
    assert run.finish() == 0, run.stderr


def test_slurm_starts_one_agent_per_node_of_the_allocation(cluster, tmp_path) -> None:
    with slurm(cluster, "c", ["h1", "h2"], tmp_path / "slurm") as slurm_env:
        env = dict(slurm_env, MESHDBG_TOKEN=secrets.token_urlsafe(16),
                   MESHDBG_CONNECTION_FILE=str(tmp_path / "run.json"))
        with open(tmp_path / "run.out", "w") as out, open(tmp_path / "run.err", "w") as err:
            run = cluster.start("c", ["salloc", "-N2", *meshdbg("run", "--on", "slurm", "--mesh", "hosts=2,gpus=2",
                                                                "where.py")], env, stdout=out, stderr=err, cwd=HOST_SCRIPTS)
        url = wait_for(lambda: (tmp_path / "run.json").exists() and json.loads((tmp_path / "run.json").read_text())
                       ["join"], 20, "the run's connection file")
        assert url.startswith("meshdbg://198.18.0.1:") and "#sha256=" in url  # bound beyond loopback: TLS
        client_env = dict(env, MESHDBG_ADDR=url)
        sessions = wait_for(lambda: (r := cluster.run("h2", meshdbg("list", "--json"), client_env)).returncode == 0
                            and len(json.loads(r.stdout)) == 4 and json.loads(r.stdout), 30, "4 ranks stopped")
        assert {s["rank"]: s["hostname"] for s in sessions} == {0: "h1", 1: "h1", 2: "h2", 3: "h2"}  # SLURM_NODEID
        hosts = json.loads(cluster.run("h2", meshdbg("hosts", "--json"), client_env).stdout)
        assert [(h["index"], h["hostname"], h["placer"]) for h in hosts] == [(0, "h1", "slurm"), (1, "h2", "slurm")]
        assert cluster.run("h2", meshdbg("continue"), client_env).returncode == 0
        assert run.wait(timeout=30) == 0, (tmp_path / "run.err").read_text()
        assert "DONE 3" in (tmp_path / "run.out").read_text()
        squeue = cluster.run("c", ["squeue", "-h"], env)
        assert squeue.stdout.strip() == ""  # the allocation ended with the run


def test_ssh_starts_one_agent_per_named_node_in_its_order(cluster, tmp_path) -> None:
    config = start_sshd(cluster, ["h1", "h2"], tmp_path / "ssh")
    env = dict(os.environ, MESHDBG_TOKEN=secrets.token_urlsafe(16), MESHDBG_CONNECTION_FILE=str(tmp_path / "run.json"))
    with open(tmp_path / "run.out", "w") as out, open(tmp_path / "run.err", "w") as err:
        run = cluster.start("c", ["sh", "-c", f'mount --bind {config} /etc/ssh/ssh_config && exec "$@"', "-",
                                  *meshdbg("run", "--on", "ssh:h2,h1", "--mesh", "hosts=2,gpus=1", "where.py")],
                            env, stdout=out, stderr=err, cwd=HOST_SCRIPTS)
    url = wait_for(lambda: (tmp_path / "run.json").exists() and json.loads((tmp_path / "run.json").read_text())["join"],
                   20, "the run's connection file")
    client_env = dict(env, MESHDBG_ADDR=url)
    sessions = wait_for(lambda: (r := cluster.run("h1", meshdbg("list", "--json"), client_env)).returncode == 0
                        and len(json.loads(r.stdout)) == 2 and json.loads(r.stdout), 30, "2 ranks stopped")
    assert {s["rank"]: s["hostname"] for s in sessions} == {0: "h2", 1: "h1"}  # the order --on ssh named them in
    assert cluster.run("h1", meshdbg("continue"), client_env).returncode == 0
    assert run.wait(timeout=30) == 0, (tmp_path / "run.err").read_text()
    assert "[r0 hosts=0,gpus=0] DONE 0" in (tmp_path / "run.out").read_text()
    wait_for(lambda: not any("meshdbg" in " ".join(_cmdline(pid)) for host in ("h1", "h2") for pid in cluster.pids(host)),
             10, "no agent left on any node")


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().decode(errors="replace").split("\0")
    except OSError:
        return []
