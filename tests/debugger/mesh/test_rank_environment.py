"""The ranks `meshdbg run` starts get the environment the user gave it, not what the command set
for its own gRPC (meshdbg.debugger.grpc_engine)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mesh_helpers import client_env

from meshdbg.debugger import grpc_engine


def test_the_programs_meshdbg_run_starts_get_the_users_environment(tmp_path: Path) -> None:
    """The variables are set only while the command's gRPC loads: a rank (the user's program,
    whose own gRPC must behave as without meshdbg, its log lines included) inherits neither."""
    (tmp_path / "job.py").write_text("import os\nprint('experiments:', os.environ.get('GRPC_EXPERIMENTS', 'unset'), "
                                     "os.environ.get('GRPC_VERBOSITY', 'unset'))\n")
    env = client_env(tmp_path)
    env.pop(grpc_engine.VARIABLE, None)
    env.pop(grpc_engine.VERBOSITY, None)
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=2", "job.py"], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("experiments: unset unset") == 2, done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize("verbosity", [None, "INFO"], ids=["unset", "set by the user"])
def test_a_rank_that_forks_prints_no_grpc_info_lines_unless_the_user_asked(tmp_path: Path,
                                                                           verbosity: str | None) -> None:
    """meshdbg loads gRPC in each rank (its agent stream, a stop's) with GRPC_VERBOSITY=ERROR
    unless the user set it (meshdbg.worker.dependencies): gRPC's INFO line "Other threads are
    currently calling into gRPC, skipping fork() handlers" came at every fork of a rank (a
    pool's, a DataLoader's workers), a line the job never prints without meshdbg."""
    (tmp_path / "job.py").write_text("import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"
                                     "print('forked; GRPC_VERBOSITY', os.environ.get('GRPC_VERBOSITY', 'unset'))\n")
    env = client_env(tmp_path)
    env.pop(grpc_engine.VERBOSITY, None)
    if verbosity is not None:
        env[grpc_engine.VERBOSITY] = verbosity
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=1", "job.py"], cwd=tmp_path,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"forked; GRPC_VERBOSITY {verbosity or 'unset'}" in done.stdout, done.stdout  # the job's own environment
    assert ("skipping fork() handlers" in done.stdout + done.stderr) == (verbosity is not None), done.stdout + done.stderr
