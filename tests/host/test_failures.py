"""A multi-host job runs everywhere or stops everywhere, with one line saying why."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from e2e import wait_for
from netns import meshdbg

DETECT_S = 5.0


def stopped_everywhere(run, ranks: int) -> None:
    wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0 and len(json.loads(r.stdout)) == ranks,
             30, f"{ranks} ranks stopped")


@pytest.mark.parametrize("fault", ["crash", "partition"])
def test_a_lost_host_stops_the_mesh_with_255(multi_run, cluster, fault: str) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=2", "where.py")
    run.join("h1", "h2")
    stopped_everywhere(run, 4)
    start = time.monotonic()
    if fault == "crash":
        cluster.kill_all("h2")  # the agent and both ranks of host 1
    else:
        cluster.link_down("h2")  # they run on, unreachable: only keepalive can tell
    wait_for(lambda: "(host lost)" in run.stderr, DETECT_S + 1, "the run naming the host lost")
    detected = time.monotonic() - start
    assert detected <= DETECT_S, f"host lost noticed after {detected:.1f} s"
    # Host 0's ranks are paused in pdb: the mesh waits for them (a failure took them at once);
    # SIGTERM to the run ends it, with the lost host's status.
    wait_for(lambda: "the mesh stops once ranks 0, 1, paused in pdb, go on" in run.stderr, 10, "the stop held")
    assert "meshdbg: rank 2 failed (host lost, exit status 255)" in run.stderr
    run.process.send_signal(signal.SIGTERM)
    assert run.finish(timeout=15) == 255, run.stderr
    assert "host 1 h2 (198.18.0.3) lost: ranks 2-3 marked exited (host lost)" in run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("meshdbg: rank 2 failed first (host lost, exit status 255); "
                                                          "the mesh was stopped: ranks 0-1 SIGTERM, rank 3 host lost")
    assert run.agents["h1"].wait(timeout=10) == 0  # host 0's ranks were stopped, its agent ended
    assert cluster.pids("h1") == []


def test_keep_going_outlives_a_lost_host(multi_run, cluster) -> None:
    run = multi_run("--keep-going", "--mesh", "hosts=2,gpus=1", "where.py")
    run.join("h1", "h2")
    stopped_everywhere(run, 2)
    cluster.kill_all("h2")
    wait_for(lambda: "(host lost)" in run.stderr, DETECT_S + 1, "the run naming the host lost")
    workers = {w["rank"]: w for w in json.loads(run.cli("h1", "list", "--all", "--json").stdout)}
    assert workers[0]["state"] == "stopped" and (workers[1]["state"], workers[1]["reason"]) == ("exited", "host lost")
    table = run.cli("h1", "list", "--all").stdout
    assert "host lost" in table, table
    hosts = {h["hostname"]: h["state"] for h in json.loads(run.cli("h1", "hosts", "--json").stdout)}
    assert hosts == {"h1": "up", "h2": "lost"}
    # Rank 1's session ended with its host: it was listed "not answering" for the reconnect
    # window, as a paused rank that `continue` could not resume.
    assert [s["rank"] for s in json.loads(run.cli("h1", "list", "--json").stdout)] == [0]
    resumed = run.cli("h1", "continue")
    assert (resumed.returncode, resumed.stdout, resumed.stderr) == (0, "resumed 1 session (rank 0)\n", "")
    assert run.finish() == 255, run.stderr  # the first failure's status, as for a failing rank


def test_a_killed_run_leaves_no_rank_on_any_host(multi_run, cluster) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=2", "where.py")
    run.join("h1", "h2")
    stopped_everywhere(run, 4)
    assert len(cluster.pids("h1")) >= 4  # the agent, its fork server and two ranks
    start = time.monotonic()
    os.kill(run.process.pid, signal.SIGKILL)
    wait_for(lambda: not cluster.pids("h1") and not cluster.pids("h2"), DETECT_S + 1, "every host emptied")
    assert time.monotonic() - start <= DETECT_S
    assert "lost the run" in (run.folder / "h1.err").read_text()


STALL_S = 10.0  # well past the ~4 s in which keepalive gives a silent peer up


def test_a_run_stalled_for_10_s_keeps_every_host_and_its_paused_ranks(multi_run, cluster) -> None:
    """A stalled run is not a dead one: SIGSTOPped for 10 s, it finds every host and every
    paused rank as it left them (the agents gave the run up after ~4 s of silence and stopped
    their ranks: "lost the run", every rank `exited (host lost)`)."""
    run = multi_run("--mesh", "hosts=2,gpus=2", "where.py")
    run.join("h1", "h2")
    stopped_everywhere(run, 4)
    os.kill(run.process.pid, signal.SIGSTOP)
    try:
        time.sleep(STALL_S)  # the fault itself: a run that answers nothing for this long
    finally:
        os.kill(run.process.pid, signal.SIGCONT)
    cast = run.cli("h1", "cast", "all", "p int(os.environ['RANK']) * 10")
    assert cast.returncode == 0 and [line.strip() for line in cast.stdout.splitlines()[1::2]] == ["0", "10", "20", "30"], \
        cast.stdout + cast.stderr
    sessions = json.loads(run.cli("h1", "list", "--json").stdout)
    assert sorted((s["rank"], s["state"]) for s in sessions) == [(rank, "stopped") for rank in range(4)]
    assert run.cli("h1", "continue").returncode == 0
    assert run.finish(timeout=30) == 0, run.stderr
    assert "host lost" not in run.stderr and "lost the run" not in (run.folder / "h1.err").read_text()


def test_late_duplicate_and_too_few_hosts_are_refused_in_one_line(multi_run, cluster) -> None:
    run = multi_run("--wait-hosts", "4", "--mesh", "hosts=2,gpus=1", "where.py")
    run.join("h1", extra=("--index", "1"))
    wait_for(lambda: "joined (1/2)" in run.stderr, 20, "h1 joined")
    duplicate = cluster.run("h2", meshdbg("host", "--join", run.url, "--index", "1"), run.env)
    assert duplicate.returncode != 0
    assert duplicate.stderr.strip().splitlines() == ["meshdbg: refused by the run: duplicate index 1: h1 (198.18.0.2) has it"]
    assert run.finish(timeout=20) == 2
    last = run.stderr.strip().splitlines()[-1]
    assert last == "meshdbg: 1 of 2 hosts joined within 4 s: h1 (198.18.0.2) index hint 1 (--wait-hosts waits longer)"
    assert run.agents["h1"].wait(timeout=10) != 0


def test_wrong_token_and_fingerprint_are_refused(multi_run, cluster) -> None:
    run = multi_run("--mesh", "hosts=1,gpus=1", "where.py")
    run.join()
    wrong_token = cluster.run("h1", meshdbg("host", "--join", run.url),
                              dict(run.env, MESHDBG_TOKEN="not-the-token"))
    assert wrong_token.returncode == 3 and "refused our token" in wrong_token.stderr
    assert len(wrong_token.stderr.strip().splitlines()) == 1, wrong_token.stderr
    other_pin = run.url[:-4] + "0000"
    wrong_pin = cluster.run("h1", meshdbg("host", "--join", other_pin), run.env)
    assert wrong_pin.returncode == 3 and "refusing to send the token" in wrong_pin.stderr
    run.join("h2")
    stopped_everywhere_on = wait_for(lambda: (r := run.cli("h2", "list", "--json")).returncode == 0
                                     and json.loads(r.stdout), 30, "1 rank stopped")
    assert stopped_everywhere_on[0]["hostname"] == "h2"
    late = cluster.run("h1", meshdbg("host", "--join", run.url), run.env)
    assert late.returncode != 0
    assert late.stderr.strip().splitlines() == ["meshdbg: refused by the run: too late: the run already has its 1 host(s)"]
    assert run.cli("h2", "continue").returncode == 0
    assert run.finish() == 0, run.stderr


def test_an_agent_interrupted_while_waiting_leaves_the_run(multi_run, cluster) -> None:
    run = multi_run("--wait-hosts", "6", "--mesh", "hosts=2,gpus=1", "where.py")
    run.join("h1")
    wait_for(lambda: "joined (1/2)" in run.stderr, 20, "h1 joined")
    run.agents["h1"].send_signal(signal.SIGINT)
    assert run.agents["h1"].wait(timeout=5) == 130
    assert run.finish(timeout=20) == 2
    assert run.stderr.strip().splitlines()[-1] == "meshdbg: 0 of 2 hosts joined within 6 s (--wait-hosts waits longer)"
