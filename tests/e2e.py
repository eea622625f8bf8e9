"""End-to-end test helpers: a real `meshdbg serve`, real worker processes, the real CLI.

A module of its own (not conftest) so tests in every folder import it by one unique name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import grpc

from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.keepalive import SERVER_KEEPALIVE
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc
from meshdbg.debugger.auth import TokenInterceptor
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.servicer import DebuggerServicer
from watching import wait_sessions

SCRIPTS = Path(__file__).parent / "scripts"
T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, what: str = "condition") -> T:
    """Poll `predicate` until it returns something truthy; fail the test after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


def line_of(script: str, marker: str) -> int:
    """The number of the first line of tests/scripts/SCRIPT that contains `marker`."""
    lines = (SCRIPTS / script).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if marker in text)


@dataclass
class Server:
    """A running `meshdbg serve` and the environment clients and workers need to reach it."""

    process: subprocess.Popen
    addr: str
    env: dict[str, str]
    workers: list[subprocess.Popen] = field(default_factory=list)

    def cli(self, *args: str, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = 20) -> subprocess.CompletedProcess:
        """Run `meshdbg ARGS` against this server."""
        return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=env or self.env, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def worker(self, script: str, rank: int | None = 0, coords: str = "", *args: str,
               env: dict[str, str] | None = None, bootstrap: bool = False, **popen: object) -> subprocess.Popen:
        """Start tests/scripts/SCRIPT as a worker with the given rank and coordinates (rank
        None: neither, as under another launcher, whose variables `env` holds); `bootstrap`:
        as a rank of `meshdbg run` runs, under the bootstrap, with an agent stream."""
        worker_env = dict(env or self.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook", PYTHONUNBUFFERED="1")
        if rank is not None:
            worker_env.update(MESHDBG_RANK=str(rank), MESHDBG_COORDS=coords)
        popen.setdefault("stdin", subprocess.DEVNULL)
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        popen.setdefault("start_new_session", True)  # stop_process ends any child it forked too
        launch = [sys.executable, "-m", "meshdbg.worker.mesh.bootstrap"] if bootstrap else [sys.executable]
        process = subprocess.Popen([*launch, str(SCRIPTS / script), *args], env=worker_env, text=True, **popen)
        self.workers.append(process)
        return process

    def run(self, coroutine_function: Callable[..., object], *args: object) -> object:
        """Run an async test body with a ControlClient of this server as its first argument."""
        async def body() -> object:
            async with ControlClient(ConnectionInfo(self.addr, self.env["MESHDBG_TOKEN"])) as client:
                return await coroutine_function(client, *args)

        return asyncio.run(body())

    def sessions(self) -> list[dict]:
        result = self.cli("list", "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def peak_memory_mb(self) -> float:
        """The server process's peak resident memory so far (VmHWM), in MB."""
        with open(f"/proc/{self.process.pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1000

    def wait_sessions(self, count: int, timeout: float = 15) -> list[dict]:
        """Exactly `count` sessions, every one stopped at its prompt (not merely registered),
        as `list --json` shows them; waits on the watch stream (tests/watching.py)."""
        return wait_sessions(self.env, {"count": count}, timeout)

    def close(self) -> str:
        """Kill the workers started through it, then stop the server; what each of them wrote
        that nobody read (for a failed test's report)."""
        left = [(f"worker {Path(worker.args[1]).name} (pid {worker.pid})", *stop_process(worker))
                for worker in self.workers]
        self.process.terminate()
        left.append(("meshdbg serve", *self.process.communicate(timeout=10)))
        return "".join(f"--- {name}, {stream} ---\n{text.rstrip()}\n" for name, out, err in left
                       for stream, text in (("stdout", out), ("stderr", err)) if text and text.strip())


@contextlib.contextmanager
def serving(tmp_path: Path, options: tuple[str, ...] = (), on_close: Callable[[str], None] = lambda left: None
            ) -> Iterator[Server]:
    """`start_server` for the length of a `with` block (or a fixture), closed after; `on_close`
    gets what its processes wrote that nobody read."""
    server = start_server(tmp_path, options=options)
    try:
        yield server
    finally:
        on_close(server.close())


def start_server(tmp_path: Path, token: str = "test-token", options: tuple[str, ...] = ()) -> Server:
    """A `meshdbg serve --port 0 OPTIONS` of its own, with its connection file in `tmp_path`."""
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"), MESHDBG_TOKEN=token)
    env.pop("MESHDBG_ADDR", None)
    process = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0", *options], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addr = process.stdout.readline().strip()
    if not addr:
        process.kill()
        raise AssertionError(f"server did not start: {process.stderr.read()}")
    return Server(process, addr, env)


def stop_process(process: subprocess.Popen) -> tuple[str, str]:
    """Kill a worker and, if it leads a process group, the children it forked (they hold its
    pipes); what it wrote that nobody read (stdout, stderr)."""
    if process.poll() is None:
        process.kill()
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    out, err = process.communicate(timeout=10)
    return out or "", err or ""


def with_meshdbg_pth(tmp_path: Path) -> str:
    """A PYTHONPATH whose sitecustomize reads meshdbg.pth from a site dir of the test's own: what
    a wheel install puts in site-packages, for this (editable) checkout."""
    site, boot = tmp_path / "site", tmp_path / "boot"
    site.mkdir(exist_ok=True)
    boot.mkdir(exist_ok=True)
    shutil.copy(Path(__file__).parents[1] / "meshdbg.pth", site)
    (boot / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site)!r})\n")
    return str(boot)


@contextlib.contextmanager
def servicer_on_loopback(servicer: DebuggerServicer, **options: int) -> Iterator[ConnectionInfo]:
    """`servicer` on a real gRPC server on loopback (token "t"), with grpc.aio.server's `options`."""
    started = threading.Event()
    stop: list[asyncio.Event] = []
    addr: list[str] = []

    async def serve() -> None:
        server = grpc.aio.server(interceptors=[TokenInterceptor("t")], options=SERVER_KEEPALIVE, **options)
        pb_grpc.add_DebuggerServicer_to_server(servicer, server)
        addr.append(f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}")
        await server.start()
        stop.append(asyncio.Event())
        started.set()
        await stop[0].wait()
        await server.stop(0)

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        yield ConnectionInfo(addr[0], "t")
    finally:
        loop.call_soon_threadsafe(stop[0].set)
        thread.join(10)
