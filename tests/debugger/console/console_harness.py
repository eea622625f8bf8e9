"""The console tests' harness: a real `meshdbg serve`, real workers, the console in a pty.

Every wait is on a condition with a timeout: the server's first line, the control API's
watch stream, or pexpect's expect.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pty_child import PtyChild
from watching import wait_sessions

HERE = Path(__file__).parent
WORKER_SCRIPT = HERE / "stopping_worker.py"
WAIT_S = 15.0


class Mesh:
    """A meshdbg server and the workers started against it, for one test."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path = tmp_path
        self.connection_file = tmp_path / "conn.json"
        monkeypatch.setenv("MESHDBG_CONNECTION_FILE", str(self.connection_file))
        monkeypatch.delenv("MESHDBG_ADDR", raising=False)
        monkeypatch.delenv("MESHDBG_TOKEN", raising=False)
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
        self.env.update(MESHDBG_CONNECTION_FILE=str(self.connection_file), MESHDBG_HISTORY=str(tmp_path / "history"),
                        PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook", NO_COLOR="1", TERM="xterm-256color",
                        PROMPT_TOOLKIT_NO_CPR="1", PYTHONUNBUFFERED="1")
        self.server: subprocess.Popen[str] | None = None
        self.addr = ""
        self.workers: list[subprocess.Popen[bytes]] = []
        self.consoles: list[PtyChild] = []

    def start_server(self) -> str:
        """`meshdbg serve --port 0`; its address, read from its first line."""
        self.server = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=self.env,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.addr = self.server.stdout.readline().strip()
        if not self.addr:
            raise RuntimeError("meshdbg serve printed no address")
        return self.addr

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=WAIT_S)
            self.server = None

    def start_worker(self, rank: int, coords: str = "", then: str = "exit", bootstrap: bool = False
                     ) -> subprocess.Popen[bytes]:
        """A worker process on `stopping_worker.py` (through the mesh bootstrap if asked)."""
        env = dict(self.env, MESHDBG_RANK=str(rank), MESHDBG_COORDS=coords or f"hosts={rank // 2},gpus={rank % 2}")
        launch = [sys.executable, "-m", "meshdbg.worker.mesh.bootstrap"] if bootstrap else [sys.executable]
        worker = subprocess.Popen([*launch, str(WORKER_SCRIPT), then], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.workers.append(worker)
        return worker

    def wait_sessions(self, stopped: set[int] = frozenset(), running: set[int] = frozenset(),
                      live: set[int] | None = None) -> list[dict]:
        """Block until ranks `stopped`/`running` have sessions in that state (and exactly `live`
        ranks have sessions, if given); the sessions as `list --json` shows them."""
        condition = {"stopped": sorted(stopped), "running": sorted(running)}
        if live is not None:
            condition["live"] = sorted(live)
        return wait_sessions(self.env, condition, WAIT_S)

    def console(self, *args: str, **env: str) -> PtyChild:
        """`meshdbg attach ARGS` in a pseudo-terminal, with this mesh's environment (plus `env`);
        all it printed so far is in `child.logfile_read.getvalue()`."""
        child = PtyChild([sys.executable, "-m", "meshdbg", "attach", *args], env=dict(self.env, **env),
                         timeout=WAIT_S, dimensions=(40, 160))
        self.consoles.append(child)
        return child

    def close(self) -> None:
        for child in self.consoles:
            child.close(force=True)
        for worker in self.workers:
            worker.kill()
            worker.wait()
        self.stop_server()
