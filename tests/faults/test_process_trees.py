"""Every process a rank starts ends with the job, however `meshdbg run` ends.

Each rank of tests/scripts/spawns_children.py starts a `sleep 600` (subprocess) and a
multiprocessing child, as a DataLoader would. When `run` is SIGKILLed (no chance to clean up)
or stopped with SIGTERM, the ranks and all those processes must be gone within 5 s.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import SCRIPTS, wait_for
from meshdbg.host.agent import HostAgent
from meshdbg.host.plan import HostPlan, RankPlan
from meshdbg.wire.connection import pid_alive

RANKS = 2


def every_rank_wrote(pids_dir: Path) -> list[Path]:
    """Each rank's file of pids once all are in place ([] before): a file counts once renamed
    into place, not while it is the `.tmp` its rank still writes (maybe empty yet)."""
    written = [path for path in pids_dir.iterdir() if path.suffix != ".tmp"]
    return written if len(written) == RANKS else []


def start_job(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`meshdbg run` of the script; every pid it wrote (ranks and what they started)."""
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MESHDBG_ADDR", "MESHDBG_TOKEN")}
    env.update(MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"), PIDS_DIR=str(pids_dir))
    run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", f"procs={RANKS}", "spawns_children.py"],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=SCRIPTS)
    written = wait_for(lambda: every_rank_wrote(pids_dir), 30, "every rank to start its children")
    pids = [int(pid) for path in written for pid in path.read_text().split()]
    assert len(pids) == 3 * RANKS and all(pid_alive(pid) for pid in pids)
    return run, pids


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_what_ranks_start_ends_with_the_job(tmp_path: Path, signum: int) -> None:
    run, pids = start_job(tmp_path)
    try:
        run.send_signal(signum)
        run.communicate(timeout=30)
        wait_for(lambda: not any(pid_alive(pid) for pid in pids), 5, "every rank and what it started to end")
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=10)
        for pid in pids:  # only if the test failed: leave nothing behind
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_host_agent_stops_what_its_ranks_start(tmp_path: Path) -> None:
    """HostAgent.stop (every host of a run, before its fork server closes) signals each rank's
    process group: the rank's own children end with it, not only the rank."""
    pids_dir = tmp_path / "pids"
    pids_dir.mkdir()

    class Events:
        def spawned(self, rank: int, pid: int) -> None: ...

        def exited(self, rank: int, code: int) -> None: ...

    async def body() -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MESHDBG_")}
        agent = HostAgent(Events(), env=env)
        ranks = tuple(RankPlan(rank, f"r{rank}", {"MESHDBG_RANK": str(rank), "PIDS_DIR": str(pids_dir)})
                      for rank in range(RANKS))
        try:
            await agent.start(HostPlan(0, [str(SCRIPTS / "spawns_children.py")], str(SCRIPTS), ranks))
            written = await asyncio.to_thread(wait_for, lambda: every_rank_wrote(pids_dir), 30,
                                              "every rank to start its children")
            pids = [int(pid) for path in written for pid in path.read_text().split()]
            assert len(pids) == 3 * RANKS and all(pid_alive(pid) for pid in pids)
            await agent.stop(grace=5)
            await asyncio.to_thread(wait_for, lambda: not any(pid_alive(pid) for pid in pids), 5,
                                    "every rank and what it started to end")
        finally:
            await agent.close()

    asyncio.run(body())
