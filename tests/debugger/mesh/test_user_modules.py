"""A job folder whose modules are named like meshdbg's own (worker.py, debugger.py, ...) or its
dependencies' (grpc.py, a google/ package) just works.

meshdbg's importable names all live under `meshdbg.`, so the user's `worker.py` is the user's,
under `meshdbg run` and under a `serve` with the breakpoint hook alike. gRPC and protobuf come
from where they are installed (meshdbg.worker.dependencies), and `meshdbg run`'s fork server
starts by path, not `-m`, so the job's folder is not first on its sys.path: a job's grpc.py,
google/ or meshdbg.py made every stop, or the whole run, fail with the job's error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e import serving, wait_for
from mesh_helpers import client_env

SHADOWS = ("worker", "debugger", "wire", "proto", "meshdbg_worker")
NEVER_OURS = ("grpc.py", "google/__init__.py")  # the job's own; meshdbg must never import them
JOB = """\
import worker, debugger, wire, proto
value = worker.VALUE + debugger.VALUE
breakpoint()
print("job done", value, flush=True)
"""


def _job_folder(tmp_path: Path, *never_ours: str) -> Path:
    job = tmp_path / "job"
    job.mkdir()
    for name in SHADOWS:
        (job / f"{name}.py").write_text(f"VALUE = {len(name)}\n")
    for name in never_ours:
        (job / name).parent.mkdir(exist_ok=True)
        (job / name).write_text(f"raise RuntimeError('meshdbg imported the job\\'s own {name}')\n")
    (job / "job.py").write_text(JOB)
    return job


def _stopped(cli, count: int) -> list[dict]:
    def check() -> list[dict] | None:
        done = cli("list", "--json")
        sessions = json.loads(done.stdout) if done.returncode == 0 else []
        return sessions if len(sessions) == count and all(s["state"] == "stopped" for s in sessions) else None

    return wait_for(check, 20, f"{count} stopped sessions")


def test_run_with_user_modules_named_like_ours(tmp_path: Path) -> None:
    """The `meshdbg` command (`python -m meshdbg` would import the job's meshdbg.py itself, as
    Python's `-m` does for any name the current folder holds)."""
    job, env = _job_folder(tmp_path, *NEVER_OURS, "meshdbg.py"), client_env(tmp_path)
    command = str(Path(sys.executable).with_name("meshdbg"))
    run = subprocess.Popen([command, "run", "--mesh", "procs=2", "job.py"], cwd=job, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def cli(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run([command, *args], cwd=job, env=env, capture_output=True, text=True, timeout=20)

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
    job = _job_folder(tmp_path, *NEVER_OURS)  # (a meshdbg.py there would be PYTHONBREAKPOINT's `meshdbg`)
    with serving(tmp_path) as server:
        worker = subprocess.Popen([sys.executable, "job.py"], cwd=job, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=dict(server.env, PYTHONBREAKPOINT="meshdbg.set_trace"))
        server.workers.append(worker)
        _stopped(server.cli, 1)
        assert server.cli("continue").returncode == 0
        out, err = worker.communicate(timeout=20)
        assert worker.returncode == 0 and "job done 14" in out, err


def test_a_job_that_imported_its_own_grpc_first_runs_on_and_is_told_why_it_cannot_stop(tmp_path: Path) -> None:
    """Its `grpc` is in sys.modules before the first stop: meshdbg cannot use it, says so in one
    line, and the job runs on (Python's breakpoint() ignores a hook it cannot load), as with
    no debugger; it used to die with a traceback at its breakpoint()."""
    job = tmp_path / "job"
    job.mkdir()
    (job / "grpc.py").write_text("NAME = 'the job grpc'\n")
    (job / "job.py").write_text("import grpc\nbreakpoint()\nprint('job done', grpc.NAME, flush=True)\n")
    with serving(tmp_path) as server:
        done = subprocess.run([sys.executable, "job.py"], cwd=job, capture_output=True, text=True, timeout=30,
                              env=dict(server.env, PYTHONBREAKPOINT="meshdbg.set_trace"))
    assert done.returncode == 0 and "job done the job grpc" in done.stdout, done.stderr
    assert f"meshdbg: cannot stop here: the job's own grpc ({job / 'grpc.py'}), imported before its first stop" \
        in done.stderr and "Traceback" not in done.stderr, done.stderr
