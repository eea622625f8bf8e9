"""`stacks` under `meshdbg serve`, for jobs started by another launcher: ranks run through the
bootstrap (the one-word opt-in) answer through their agents or, stuck in C, through py-spy on
the server's host; a process with only a pdb session answers from it."""

from __future__ import annotations

import json
import subprocess
import sys

from e2e import Server, wait_for
from mesh_helpers import SCRIPTS


def bootstrap_worker(server: Server, rank: int) -> subprocess.Popen:
    env = dict(server.env, RANK=str(rank), MESHDBG_RANK=str(rank), PYTHONUNBUFFERED="1")
    process = subprocess.Popen([sys.executable, "-m", "meshdbg.worker.mesh.bootstrap", str(SCRIPTS / "stuck.py")],
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    server.workers.append(process)
    return process


def leaves(server: Server) -> dict[int, tuple[str, dict]]:
    """Each rank's innermost frame's function and its group's sources, by rank."""
    done = server.cli("stacks", "--json")
    found = {}
    for group in json.loads(done.stdout or "[]"):
        if group["frames"]:
            found.update({rank: (group["frames"][-1]["function"], group["sources"]) for rank in group["ranks"]})
    return found


def test_stacks_of_bootstrapped_ranks_and_of_a_session_only_process(server: Server) -> None:
    bootstrap_worker(server, 1)  # load_batch: waits
    bootstrap_worker(server, 3)  # match_forever: holds the GIL in a regex
    server.worker("stops.py", rank=7)  # only the breakpoint hook: a session, no agent stream
    found = wait_for(lambda: (f := leaves(server)) and {1, 3, 7} <= set(f) and f[3][0] == "match" and f, 30,
                     "three ranks with stacks")
    assert found[1] == ("Condition.wait", {"agent": [1]})  # threading.Event().wait() in load_batch
    assert found[3] == ("match", {"py-spy": [3]})
    assert found[7][1] == {"session": [7]} and found[7][0].startswith("stop_")
    workers = {w["rank"]: w for w in json.loads(server.cli("list", "--all", "--json").stdout)}
    assert workers[3]["state"] == "running"  # busy in C is alive
