"""The fork server (meshdbg.worker.mesh.zygote) whose launcher hangs up while it answers a
spawn ends quietly, and the rank it just forked ends with it: no traceback on the terminal
the run shares (it printed a BrokenPipeError's when `meshdbg run` gave up on it)."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

from meshdbg.worker.mesh.zygote import command


def test_a_launcher_gone_before_the_answer_ends_the_fork_server_quietly() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = subprocess.Popen(command(os.getpid(), theirs.fileno()),
                              pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    theirs.close()
    read, write = os.pipe()
    request = {"op": "spawn", "id": 1, "env": {"PATH": os.environ["PATH"]}, "argv": ["sleep.py"], "cwd": "/", "path": None}
    socket.send_fds(ours, [json.dumps(request).encode()], [write, write])
    ours.close()  # hung up before the zygote says "spawned"
    os.close(write)
    _, err = zygote.communicate(timeout=30)
    assert zygote.returncode == 0, err
    assert "Traceback" not in err, err
    deadline = time.monotonic() + 10
    while True:  # the forked rank holds the pipe's write end: end of file once it is gone
        ready, _, _ = select.select([read], [], [], max(deadline - time.monotonic(), 0))
        assert ready, "the forked rank lives on"
        if not os.read(read, 4096):
            break
    os.close(read)
