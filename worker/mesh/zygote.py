"""The fork server: one process that imports the worker side once and forks every rank.

Starting 32 Python interpreters that each import grpc costs seconds on a small machine;
forking a process that already imported them costs milliseconds. The launcher starts this
module as `python PATH/zygote.py LAUNCHER_PID FD` (`command`) and talks to it over the inherited
AF_UNIX SOCK_SEQPACKET socket FD, one JSON message per packet:

    launcher → zygote   {"op": "spawn", "id", "env", "argv", "cwd", "path"}  + 2 fds (stdout, stderr)
    zygote → launcher   {"op": "spawned", "id", "pid"}
                        {"op": "reaped", "pid", "code"}   code: exit status, or -signal

The zygote creates no gRPC channel, server or thread before forking (gRPC does not survive a
fork once started); each child creates its own after the fork. Nothing outlives the launcher,
not even what a rank starts itself (a DataLoader worker, a subprocess): each rank leads a
session and process group of its own, as under torchrun, which the launcher signals to stop
it. When the launcher dies, even by SIGKILL, the zygote learns it (a parent-death SIGTERM, or
EOF on the socket) and SIGKILLs every rank's group before it exits; a rank dies with the zygote
(PR_SET_PDEATHSIG) should the zygote itself be killed. Ctrl-C in the launcher's terminal
reaches the launcher only: none of these groups is the terminal's, and the launcher decides
how the mesh stops.
"""

from __future__ import annotations

import ctypes
import io
import json
import os
import selectors
import signal
import socket
import sys
from dataclasses import dataclass
from typing import cast

PR_SET_PDEATHSIG = 1
MAX_MESSAGE = 1 << 20


def die_with_parent(parent_pid: int, signum: int = signal.SIGKILL) -> None:
    """Have the kernel send `signum` to this process when its parent dies (Linux); exit if it
    already has."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)
    if os.getppid() != parent_pid:
        os._exit(1)


@dataclass
class ChildTask:
    """What a forked child runs once it has left the zygote's loop."""

    env: dict[str, str]
    argv: list[str]
    cwd: str
    path: list[str] | None  # sys.path to use (a ProcMesh passes its own), else the bootstrap decides


def command(launcher_pid: int, fd: int) -> list[str]:
    """How a launcher starts the fork server: by this file's path, not `-m`. With `-m`, Python
    puts the current folder, the job's, first on sys.path, and a job's own `meshdbg.py` or
    `grpc.py` was imported in place of ours (the run failed with its error). By path, it puts
    this file's folder there, which each child's bootstrap replaces with the job's, as Python
    would have put it for the job."""
    return [sys.executable, os.path.abspath(__file__), str(launcher_pid), str(fd)]


def _send(sock: socket.socket, message: dict) -> None:
    sock.send(json.dumps(message).encode())


class Zygote:
    """The zygote's loop: fork on request, report every child's exit."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.children: set[int] = set()
        self.groups: set[int] = set()  # every rank's process group, reaped or not: what it started may live on
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, self._launcher_died)
        signal.set_wakeup_fd(self._wake_w)
        self._selector = selectors.DefaultSelector()
        self._selector.register(sock, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)

    def serve(self) -> ChildTask | None:
        """Run until the launcher goes away (None) or, in a freshly forked child, its task."""
        try:
            return self._serve()
        except (BrokenPipeError, ConnectionResetError):  # the launcher closed its end while we answered
            self._kill_all()
            return None

    def _serve(self) -> ChildTask | None:
        while True:
            for key, _ in self._selector.select():
                if key.fileobj is self.sock:
                    message, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 2)
                    if not message:
                        self._kill_all()
                        return None
                    task = self._spawn(json.loads(message), fds)
                    if task is not None:
                        return task
                else:
                    os.read(self._wake_r, 4096)
                    self._reap()

    def _spawn(self, request: dict, fds: list[int]) -> ChildTask | None:
        zygote_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            self._become_child(zygote_pid, fds)
            return ChildTask(request["env"], request["argv"], request["cwd"], request.get("path"))
        for fd in fds:
            os.close(fd)
        self.children.add(pid)
        self.groups.add(pid)
        _send(self.sock, {"op": "spawned", "id": request["id"], "pid": pid})
        return None

    def _become_child(self, zygote_pid: int, fds: list[int]) -> None:
        os.setsid()  # a session and process group of its own: the launcher and the zygote end all of it
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._selector.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self.sock.close()
        die_with_parent(zygote_pid)
        devnull = os.open(os.devnull, os.O_RDONLY)
        for target, fd in ((0, devnull), (1, fds[0]), (2, fds[1])):
            os.dup2(fd, target)
            os.close(fd)

    def _reap(self) -> None:
        while self.children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            self.children.discard(pid)
            _send(self.sock, {"op": "reaped", "pid": pid, "code": os.waitstatus_to_exitcode(status)})

    def _kill_all(self) -> None:
        """SIGKILL every rank and every process of its group (what it started, and what those started)."""
        for pid in self.children:
            os.kill(pid, signal.SIGKILL)
        for group in self.groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # the group is empty (or its id already names another user's group)

    def _launcher_died(self, signum: int, frame: object) -> None:
        """The parent-death signal: the launcher is gone (perhaps SIGKILLed), so is its mesh."""
        self._kill_all()
        os._exit(1)


def run_child(task: ChildTask) -> int:
    """Become the worker: its environment, directory and argv, then the bootstrap."""
    os.environ.clear()
    os.environ.update(task.env)
    os.chdir(task.cwd)
    sys.argv = list(task.argv)
    if task.path is not None:
        sys.path[:] = task.path
    for stream in (sys.stdout, sys.stderr):  # the zygote's own text streams
        cast(io.TextIOWrapper, stream).reconfigure(line_buffering=True)
    from meshdbg.worker.mesh import bootstrap

    return bootstrap.main(task.argv)


def main(argv: list[str]) -> int:
    launcher_pid, fd = int(argv[0]), int(argv[1])
    die_with_parent(launcher_pid, signal.SIGTERM)  # caught once the Zygote is made: it ends the ranks' groups
    from meshdbg.worker.mesh import bootstrap  # noqa: F401  (the point of a zygote: import once, fork many)

    task = Zygote(socket.socket(fileno=fd)).serve()
    return 0 if task is None else run_child(task)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
