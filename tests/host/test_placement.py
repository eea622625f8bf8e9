"""Ranks placed on network-namespace hosts by `meshdbg host` agents: the right host answers."""

from __future__ import annotations

import json
import re

from e2e import wait_for


def test_placement_cast_and_hosts_across_two_hosts(multi_run) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=2", "where.py")
    run.join("h2", "h1")
    sessions = wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0
                        and len(json.loads(r.stdout)) == 4 and json.loads(r.stdout), 30, "4 ranks stopped")
    assert {s["rank"]: s["hostname"] for s in sessions} == {0: "h1", 1: "h1", 2: "h2", 3: "h2"}  # by hostname order
    cast = run.cli("h1", "cast", "--json", "ranks(hosts=1)", "p here")
    assert cast.returncode == 0, cast.stderr
    assert {r["rank"]: r["output"].strip() for r in json.loads(cast.stdout)} == {2: "'h2'", 3: "'h2'"}
    hosts = json.loads(run.cli("c", "hosts", "--json").stdout)
    assert hosts == [
        {"index": 0, "hostname": "h1", "address": "198.18.0.2", "state": "up", "ranks": [0, 1], "placer": "join"},
        {"index": 1, "hostname": "h2", "address": "198.18.0.3", "state": "up", "ranks": [2, 3], "placer": "join"}]
    assert run.cli("h2", "continue").returncode == 0
    assert run.finish() == 0, run.stderr
    where = {int(m[1]): m.groups()[1:] for m in re.finditer(r"WHERE (\d) (\S+) (\S+) (\d+) (\d) (\d)", run.stdout)}
    ports = {w[2] for w in where.values()}
    assert len(ports) == 1
    assert {rank: w[:2] + w[3:] for rank, w in where.items()} == {
        0: ("h1", "198.18.0.2", "0", "4"), 1: ("h1", "198.18.0.2", "1", "4"),
        2: ("h2", "198.18.0.2", "0", "4"), 3: ("h2", "198.18.0.2", "1", "4")}  # MASTER_ADDR: host 0 as it reported
    assert re.search(r"^\[r3 hosts=1,gpus=1\] DONE 3$", run.stdout, re.M)  # output relayed, prefixed
    for agent in run.agents.values():
        assert agent.wait(timeout=10) == 0


def test_a_flood_of_output_arrives_whole_and_in_order(multi_run) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=1", "flood.py")
    run.join("h1", "h2")
    assert run.finish(timeout=60) == 0, run.stderr[-2000:]
    for rank in (0, 1):
        prefix = f"[r{rank} hosts={rank},gpus=0] "
        lines = [line[len(prefix):] for line in run.stdout.splitlines() if line.startswith(prefix)]
        assert len(lines) == 20_001 and lines[-1] == f"END {rank}"
        assert [int(line[:6]) for line in lines[:-1]] == list(range(20_000))  # nothing lost, nothing reordered
