"""`meshdbg run` in a pseudo-terminal: the attached rank's output shows once, in order with pdb's,
as in a local terminal; the rank's log lines come back once the console no longer shows it."""

from __future__ import annotations

from pathlib import Path

from printing_run import run_argv, spawn_run, step_over_the_print


def test_the_attached_ranks_output_shows_once_in_its_session_then_in_the_logs(tmp_path: Path,
                                                                              private_runtime_dir: Path) -> None:
    child = spawn_run(run_argv("--mesh", "gpus=2"), tmp_path, private_runtime_dir)
    try:
        text = step_over_the_print(child, "r0 gpus=0")
    finally:
        child.close(force=True)
    assert "[r1 gpus=1] rank 1 ran" in text
