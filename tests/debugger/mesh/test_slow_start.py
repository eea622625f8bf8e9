"""A run whose ranks are slow to start: it says which it waits for, and Ctrl-C ends it cleanly."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from e2e import wait_for
from mesh_helpers import Run, pid_gone, start_run

SITE = '''import os, sys
if any(arg.endswith(os.path.join("mesh", "zygote.py")) for arg in sys.orig_argv) and not os.path.exists({done!r}):
    open({pid!r}, "w").write(str(os.getpid()))
    with open({gate!r}) as gate:  # the fork server's interpreter waits here, as on a slow file system
        gate.read()
    open({done!r}, "w").close()
'''
WAITING = re.compile(r"meshdbg: 0 of 2 ranks ready after 1\d s; waiting for ranks 0-1 \(`meshdbg list --all` shows "
                     r"them; Ctrl-C stops the job\)\n")


def slow_run(tmp_path: Path, own_group: bool = False) -> tuple[Run, Path, Path]:
    """`run --mesh procs=2 report.py` whose fork server starts only once its gate (a FIFO) is
    opened; the run, the gate, and the file the fork server writes its pid to."""
    gate, done, pid = tmp_path / "gate", tmp_path / "done", tmp_path / "zygote.pid"
    os.mkfifo(gate)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE.format(gate=str(gate), done=str(done), pid=str(pid)))
    return start_run(tmp_path, "--mesh", "procs=2", "report.py", env_extra={"PYTHONPATH": str(site)},
                     own_group=own_group), gate, pid


def test_a_start_that_waits_for_ranks_says_which(tmp_path: Path) -> None:
    """(A rank stuck before it registered left the run silent: no line until every rank was ready.)"""
    run, gate, _ = slow_run(tmp_path)
    try:
        line = run.process.stderr.readline()
        assert WAITING.fullmatch(line), line
        gate.write_text("go")  # the fork server goes on: both ranks start and register
        code, out, err = run.finish()
        assert code == 0, err
        ready = re.search(r"meshdbg: 2 ranks ready in (\d+\.\d\d) s", err)
        assert ready is not None and float(ready[1]) >= 10, err  # (after the note, however long a loaded machine took)
    finally:
        run.kill()


def test_ctrl_c_while_the_ranks_start_ends_the_run_cleanly(tmp_path: Path) -> None:
    """Ctrl-C reaches the terminal's whole foreground group: the fork server, still starting,
    is not in it. (It was: "Fatal Python error: init_import_site" and a traceback.)"""
    run, _, pid_file = slow_run(tmp_path, own_group=True)
    try:
        assert WAITING.fullmatch(run.process.stderr.readline())
        zygote = int(pid_file.read_text())
        os.killpg(run.process.pid, signal.SIGINT)
        code, _, err = run.finish()
        assert code == 130 and "meshdbg: interrupted; stopping the mesh" in err, err
        assert "Traceback" not in err and "Fatal Python error" not in err, err
        wait_for(lambda: pid_gone(zygote), 10, "the fork server gone with the run")
    finally:
        run.kill()
