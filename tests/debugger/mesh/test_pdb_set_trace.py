"""`import pdb; pdb.set_trace()` in a rank of `meshdbg run` stops in a meshdbg session, where local
pdb stops on the same script (the oracle), as `breakpoint()` does.

A rank has no terminal for local pdb: it read the end of its input, quit with BdbQuit, and the
failed rank stopped the whole mesh."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from e2e import wait_for
from mesh_helpers import SCRIPTS, start_run

SCRIPT = "pdb_set_trace.py"
LOCATION = re.compile(r"^> .+\((?P<lineno>\d+)\)<module>\(\)$", re.MULTILINE)


def _local_pdb_lines() -> list[int]:
    """The lines local pdb stops at in SCRIPT, continued at each stop."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MESHDBG_", "PYTHONBREAKPOINT"))}
    done = subprocess.run([sys.executable, SCRIPT], cwd=SCRIPTS, input="c\nc\n", capture_output=True, text=True,
                          timeout=30, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return [int(found["lineno"]) for found in LOCATION.finditer(done.stdout)]


def test_pdb_set_trace_in_ranks_stops_in_sessions_where_local_pdb_stops(tmp_path: Path) -> None:
    expected = _local_pdb_lines()
    assert len(expected) == 2
    run = start_run(tmp_path, "--mesh", "procs=2", SCRIPT)
    try:
        for stop, lineno in enumerate(expected):
            def stopped_here() -> list[dict] | None:
                done = run.cli("list", "--json")
                sessions = json.loads(done.stdout) if done.returncode == 0 else []
                return sessions if (len(sessions) == 2 and all(s["state"] == "stopped" and s["lineno"] == lineno
                                                                 for s in sessions)) else None

            wait_for(stopped_here, 30, f"both ranks stopped at line {lineno}")
            cast = run.cli("cast", "all", "p x" if stop == 0 else "p y")
            assert cast.returncode == 0 and all(f"  {value}\n" in cast.stdout for value in
                                                ((0, 10) if stop == 0 else (1, 11))), cast.stdout + cast.stderr
            if stop == 1:  # the header printed as the stop began comes with the first command's output
                assert "rank 0 checks y" in cast.stdout and "rank 1 checks y" in cast.stdout, cast.stdout
            assert run.cli("continue", "all").returncode == 0
        code, out, err = run.finish()
    finally:
        run.kill()
    assert code == 0, err
    assert "rank 0 done 1" in out and "rank 1 done 11" in out and "BdbQuit" not in out + err
