"""The host agent's side of the fork server (meshdbg.worker.mesh.zygote): spawn ranks, learn their exits.

    spawner = ForkServer.start(on_exit)     # early: the zygote imports while we do other work
    pid = await spawner.spawn(env, argv, cwd, stdout_fd, stderr_fd)
    ...
    spawner.close()                         # the zygote SIGKILLs whatever is left, and exits

Runs on the host agent's event loop. Must be started from a thread that lives as long as the
mesh: the kernel's parent-death signal follows the thread that forked the zygote.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
from typing import Callable

from meshdbg.wire.errors import MeshError
from meshdbg.wire.pending import PendingRequests
from meshdbg.worker.mesh.zygote import MAX_MESSAGE, command

ExitCallback = Callable[[int, int], None]  # (pid, exit status or -signal)


class ForkServer:
    """A running zygote and the socket to it."""

    def __init__(self, process: subprocess.Popen, sock: socket.socket, on_exit: ExitCallback) -> None:
        self.process = process
        self._sock = sock
        self._on_exit = on_exit
        self._spawns: PendingRequests[int] = PendingRequests()
        self._live: set[int] = set()  # spawned, exit not reported yet
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sending = asyncio.Lock()  # one request at a time waits for room on the socket

    @classmethod
    def start(cls, on_exit: ExitCallback) -> "ForkServer":
        """Start the zygote process in a process group of its own from its first instruction,
        away from the terminal's Ctrl-C (it made its group itself once started: a Ctrl-C while
        its interpreter started, slow on a loaded or network file system, killed it with
        "Fatal Python error" and a traceback on the job's terminal)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = subprocess.Popen(command(os.getpid(), theirs.fileno()), pass_fds=[theirs.fileno()],
                                   stdin=subprocess.DEVNULL, process_group=0)
        theirs.close()
        return cls(process, ours, on_exit)

    def _listen(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._loop.add_reader(self._sock.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = self._sock.recv(MAX_MESSAGE)
        except OSError:
            data = b""
        if not data:
            self._lost()
            return
        message = json.loads(data)
        if message["op"] == "spawned":
            self._live.add(message["pid"])
            self._spawns.answer(message["id"], message["pid"])
        elif message["op"] == "reaped":
            self._live.discard(message["pid"])
            self._on_exit(message["pid"], message["code"])

    def _lost(self) -> None:
        """The zygote died: fail pending spawns, and report every child as killed (they die with
        it, by their parent-death signal, and no one is left to report their exits)."""
        if self._loop is not None:  # it is: only the reader it added finds the zygote gone
            self._loop.remove_reader(self._sock.fileno())
        self._spawns.close(error=MeshError(f"the fork server exited (status {self.process.poll()})"))
        for pid in sorted(self._live):
            self._on_exit(pid, -signal.SIGKILL)
        self._live.clear()

    async def spawn(self, env: dict[str, str], argv: list[str], cwd: str, stdout_fd: int, stderr_fd: int,
                    path: list[str] | None = None) -> int:
        """Fork one worker running `meshdbg.worker.mesh.bootstrap.main(argv)` (with `path` as sys.path); its pid."""
        self._listen()

        async def send(request_id: int) -> None:
            message = {"op": "spawn", "id": request_id, "env": env, "argv": argv, "cwd": cwd, "path": path}
            await self._send(json.dumps(message).encode(), [stdout_fd, stderr_fd])

        try:
            return await self._spawns.request(send)
        finally:
            os.close(stdout_fd)
            os.close(stderr_fd)

    async def _send(self, data: bytes, fds: list[int]) -> None:
        """One request to the zygote, waiting while its socket is full. uvloop's reader (the
        loop of `meshdbg run`) makes the socket non-blocking, and each request carries the
        rank's whole environment: 64 ranks of a 4 KB environment filled the socket while the
        zygote forked, and the run failed with EAGAIN ("Resource temporarily unavailable")."""
        async with self._sending:
            while True:
                try:
                    socket.send_fds(self._sock, [data], fds)
                    return
                except BlockingIOError:
                    await self._writable()
                except OSError as exc:
                    raise MeshError(f"cannot reach the fork server: {exc}") from exc

    async def _writable(self) -> None:
        """Until the socket to the zygote has room (one waiter at a time: `_sending`)."""
        loop = asyncio.get_running_loop()
        room: asyncio.Future[None] = loop.create_future()
        fd = self._sock.fileno()

        def has_room() -> None:
            if not room.done():
                room.set_result(None)

        loop.add_writer(fd, has_room)
        try:
            await room
        finally:
            loop.remove_writer(fd)

    def close(self) -> None:
        """Close the socket: the zygote kills any child left and exits."""
        if self._loop is not None and self._sock.fileno() >= 0:
            self._loop.remove_reader(self._sock.fileno())
        self._sock.close()

    def kill(self) -> None:
        """Last resort when the zygote does not exit by itself."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
