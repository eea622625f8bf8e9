"""A job started by a launcher of the user's own stops where local pdb stops.

A profiler (`python -m cProfile train.py`), a tracer (`python -m trace`) or a wrapper script of
the user's that runs the job with `runpy.run_path` puts its frames, and runpy's, under the
job's. Two of those made meshdbg's `breakpoint()` run on without a word: runpy's frames were
taken for meshdbg's own, so every frame of a wrapped job looked like a call into meshdbg
(meshdbg.worker.frames), and cProfile's module as `__main__` made the standard library's
folder look like the job's, so gRPC could not import `logging` (meshdbg.worker.dependencies).
The oracle is local pdb, run on the same launcher and job.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import serving

JOB = """\
def main():
    x = 41
    breakpoint()
    print("job done", x + 1, flush=True)


main()
"""
WRAPPER = """\
import runpy, sys
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
LAUNCHERS = {
    "runpy wrapper": ["wrapper.py"],
    "cProfile": ["-m", "cProfile", "-o", os.devnull],
    "trace": ["-m", "trace", "--listfuncs"],
}
LOCATION = re.compile(r"^> (?P<filename>.+)\((?P<lineno>\d+)\)(?P<function>\w+)\(\)$", re.MULTILINE)
TIMEOUT_S = 60


def _local_pdb_stop(job: Path, launcher: list[str]) -> tuple[str, int, str]:
    """Where local pdb stops in `job` under `launcher`: (file, line, function) of its first `> ` line."""
    done = subprocess.run([sys.executable, *launcher, str(job)], cwd=job.parent, input="continue\n",
                          capture_output=True, text=True, timeout=TIMEOUT_S,
                          env=dict(os.environ, PYTHONBREAKPOINT="pdb.set_trace"))
    found = LOCATION.search(done.stdout)
    assert found is not None and "job done 42" in done.stdout, done.stdout + done.stderr
    return found["filename"], int(found["lineno"]), found["function"]


@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_a_job_under_a_launcher_of_the_users_stops_where_local_pdb_stops(tmp_path: Path, launcher: str) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    (tmp_path / "wrapper.py").write_text(WRAPPER)
    expected = _local_pdb_stop(job, LAUNCHERS[launcher])
    with serving(tmp_path) as server:
        worker = subprocess.Popen([sys.executable, *LAUNCHERS[launcher], str(job)], cwd=tmp_path, text=True,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(server.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook"))
        server.workers.append(worker)
        [session] = server.wait_sessions(1, timeout=30)
        assert (session["filename"], session["lineno"], session["function"]) == expected
        cast = server.cli("cast", "all", "p x")
        assert cast.returncode == 0 and "41" in cast.stdout, cast.stdout + cast.stderr
        assert server.cli("continue").returncode == 0
        out, err = worker.communicate(timeout=TIMEOUT_S)
    assert worker.returncode == 0 and "job done 42" in out, err
