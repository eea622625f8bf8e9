"""A real pipeline job for the tests: `meshdbg run` of examples/pipeline_train.py in the
background (gloo, real worker processes, the real server), and the CLI pointed at it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
import time
from typing import Callable, Iterator, TypeVar

from e2e import wait_for

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "pipeline_train.py"
SMALL = ("--hidden", "8", "--batch", "12")  # a model small enough that a step takes milliseconds
POLL_S = 0.5
T = TypeVar("T")


@dataclass
class Job:
    process: subprocess.Popen
    env: dict[str, str]
    folder: Path  # job.out and job.err: the launcher's output

    def stderr(self) -> str:
        return (self.folder / "job.err").read_text()

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """`meshdbg ARGS` against this job's server."""
        return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=self.env, capture_output=True,
                              text=True, timeout=30)

    def pipeline(self, *args: str) -> dict:
        """`meshdbg pipeline --json ARGS`, parsed (no ranks while they have not joined yet)."""
        done = self.cli("pipeline", "--json", *args)
        if done.returncode == 1 and not done.stdout and self.process.poll() is None:
            return {"ranks": [], "stall": {}}
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    def wait_pipeline(self, predicate, what: str, timeout: float = 40) -> dict:
        """`pipeline --json` once `predicate(ranks by rank)` holds."""
        def check() -> dict | None:
            answer = self.pipeline()
            return answer if predicate({r["rank"]: r for r in answer["ranks"]}) else None

        return throttled_wait(check, timeout, what)

    def break_all(self, ranks: int, *actions: str) -> list[str]:
        """`meshdbg break all ACTIONS` once all `ranks` ranks have joined (they may still be
        starting: the runtime takes the breakpoints when it starts); its output lines."""
        def deliver() -> list[str] | None:
            done = self.cli("break", "all", *actions)
            joined = done.returncode == 0 and len(done.stdout.splitlines()) == 1 and f"-{ranks - 1}:" in done.stdout
            return done.stdout.splitlines() if joined else None

        return throttled_wait(deliver, 40, f"{ranks} ranks to take the action breakpoints")

    def wait_stepping(self, ranks: int, timeout: float = 40) -> dict:
        """Every one of `ranks` ranks has started its pipeline's first step."""
        return self.wait_pipeline(lambda by_rank: len(by_rank) == ranks and all(r["step"] >= 0 for r in by_rank.values()),
                                  f"{ranks} ranks stepping", timeout)


def throttled_wait(check: Callable[[], T | None], timeout: float, what: str) -> T:
    """`wait_for` for a check that starts a CLI process: at most a few a second, so that the
    waiting does not take the core the job needs."""
    def paced() -> T | None:
        started = time.monotonic()
        value = check()
        if not value:
            time.sleep(max(0.0, POLL_S - (time.monotonic() - started)))
        return value

    return wait_for(paced, timeout, what)


@contextlib.contextmanager
def pipeline_job(tmp_path: Path, ranks: int, *args: str, run_options: tuple[str, ...] = ()) -> Iterator[Job]:
    """The example on a `pp=ranks` mesh with ARGS; stopped (SIGTERM, the launcher stops the mesh) after."""
    env = dict(os.environ, MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"))
    for key in ("MESHDBG_ADDR", "MESHDBG_TOKEN", "MESHDBG_RANK", "RANK"):
        env.pop(key, None)
    with open(tmp_path / "job.out", "w") as out, open(tmp_path / "job.err", "w") as err:  # never a full pipe
        process = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", *run_options, "--mesh", f"pp={ranks}",
                                    str(EXAMPLE), *SMALL, *args], env=env, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=err)
    try:
        wait_for(lambda: (tmp_path / "conn.json").exists() or process.poll() is not None, 30, "the job's server")
        yield Job(process, env, tmp_path)
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
