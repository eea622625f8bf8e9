"""A stop that happens while the console is away from its server is announced when it is back.

The console replays a server's live sessions as known, not news, when it first connects; after
losing its server, what stopped meanwhile (on the restarted server) is news all the same.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from console_harness import WORKER_SCRIPT, Mesh

from watching import wait_sessions

TOP = "meshdbg>"


def test_a_stop_made_while_the_console_reconnects_is_announced(mesh: Mesh) -> None:
    child = mesh.console()
    child.expect(TOP)
    mesh.stop_server()
    child.expect("retrying every")
    # The new server publishes its file elsewhere until its worker has stopped, so the stop
    # surely happens before the console can find the server again.
    elsewhere = dict(mesh.env, MESHDBG_CONNECTION_FILE=str(mesh.tmp_path / "new.json"))
    mesh.server = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=elsewhere,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert mesh.server.stdout.readline().strip()
    mesh.workers.append(subprocess.Popen([sys.executable, str(WORKER_SCRIPT)], env=dict(
        elsewhere, MESHDBG_RANK="3", MESHDBG_COORDS="hosts=1,gpus=1"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL))
    wait_sessions(elsewhere, {"stopped": [3]}, 15)
    os.replace(mesh.tmp_path / "new.json", mesh.connection_file)
    child.expect("reconnected to the server at")
    child.expect(re.escape("rank 3 (hosts=1,gpus=1) stopped at stopping_worker.py:"))
    child.sendline("list")
    child.expect(r"3\s+worker\s+hosts=1,gpus=1\s+stopped")
    child.expect(TOP)
