"""A job folder whose modules are named like meshdbg's own (worker.py, debugger.py, ...) just works.

meshdbg's importable names all live under `meshdbg.`, so the user's `worker.py` is the user's,
under `meshdbg run` and under a `serve` with the breakpoint hook alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e import serving, wait_for
from mesh_helpers import client_env

SHADOWS = ("worker", "debugger", "wire", "proto", "meshdbg_worker")
JOB = """\
import worker, debugger, wire, proto
value = worker.VALUE + debugger.VALUE
breakpoint()
print("job done", value, flush=True)
"""


def _job_folder(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    for name in SHADOWS:
        (job / f"{name}.py").write_text(f"VALUE = {len(name)}\n")
    (job / "job.py").write_text(JOB)
    return job


def _stopped(cli, count: int) -> list[dict]:
    def check() -> list[dict] | None:
        done = cli("list", "--json")
        sessions = json.loads(done.stdout) if done.returncode == 0 else []
        return sessions if len(sessions) == count and all(s["state"] == "stopped" for s in sessions) else None

    return wait_for(check, 20, f"{count} stopped sessions")


def test_run_with_user_modules_named_like_ours(tmp_path: Path) -> None:
    job, env = _job_folder(tmp_path), client_env(tmp_path)
    run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", "procs=2", "job.py"], cwd=job, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-m", "meshdbg", *args], cwd=job, env=env,
                                  capture_output=True, text=True, timeout=20)

        sessions = _stopped(cli, 2)
        assert all(Path(s["filename"]).name == "job.py" for s in sessions)
        cast = cli("cast", "all", "p value")
        assert cast.returncode == 0 and cast.stdout.count("14") == 1, cast.stdout + cast.stderr
        assert cli("continue").returncode == 0
        out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=10)
    assert run.returncode == 0, err
    assert out.count("job done 14") == 2


def test_serve_hook_with_user_modules_named_like_ours(tmp_path: Path) -> None:
    job = _job_folder(tmp_path)
    with serving(tmp_path) as server:
        worker = subprocess.Popen([sys.executable, "job.py"], cwd=job, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=dict(server.env, PYTHONBREAKPOINT="meshdbg.set_trace"))
        server.workers.append(worker)
        _stopped(server.cli, 1)
        assert server.cli("continue").returncode == 0
        out, err = worker.communicate(timeout=20)
        assert worker.returncode == 0 and "job done 14" in out, err
