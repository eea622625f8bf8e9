"""A run whose ranks take long to register says, every few seconds, which ones it waits for."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mesh_helpers import start_run

SITE = '''import os, sys
if any(arg.endswith(os.path.join("mesh", "zygote.py")) for arg in sys.orig_argv) and not os.path.exists({done!r}):
    with open({gate!r}) as gate:  # the fork server's interpreter waits here, as on a slow file system
        gate.read()
    open({done!r}, "w").close()
'''


def test_a_start_that_waits_for_ranks_says_which(tmp_path: Path) -> None:
    """(A rank stuck before it registered left the run silent: no line until every rank was ready.)"""
    gate, done = tmp_path / "gate", tmp_path / "done"
    os.mkfifo(gate)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE.format(gate=str(gate), done=str(done)))
    run = start_run(tmp_path, "--mesh", "procs=2", "report.py", env_extra={"PYTHONPATH": str(site)})
    try:
        line = run.process.stderr.readline()
        assert re.fullmatch(r"meshdbg: 0 of 2 ranks ready after 1\d s; waiting for ranks 0-1 \(`meshdbg list --all` "
                            r"shows them; Ctrl-C stops the job\)\n", line), line
        gate.write_text("go")  # the fork server goes on: both ranks start and register
        code, out, err = run.finish()
        assert code == 0, err
        assert re.search(r"meshdbg: 2 ranks ready in 1\d\.\d\d s", err), err
    finally:
        run.kill()
