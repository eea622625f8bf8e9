"""A multi-host `meshdbg run` in a pseudo-terminal: what a rank on another host prints while the
console on the run's terminal is attached to it shows once, in its session, not again as a log
line (its agent sends which lines the session showed; the run leaves them out as for its own)."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

from netns import HOST_SCRIPTS, meshdbg
from printing_run import run_argv, spawn_run, step_over_the_print


def test_a_remote_ranks_output_shown_in_its_session_is_not_logged_again(cluster, tmp_path: Path,
                                                                       private_runtime_dir: Path) -> None:
    argv = cluster.command("c", run_argv("--on", "join", "--bind", cluster.address("c"), "--mesh", "hosts=2,gpus=1"))
    child = spawn_run(argv, tmp_path, private_runtime_dir, MESHDBG_TOKEN=secrets.token_urlsafe(16))
    try:
        child.expect(r"meshdbg host --join (meshdbg://\S+)")
        for host in ("h1", "h2"):
            with open(tmp_path / f"{host}.err", "w") as err:
                cluster.start(host, meshdbg("host", "--join", child.match.group(1)), child.env, stdout=err,
                              stderr=subprocess.STDOUT, cwd=HOST_SCRIPTS)
        text = step_over_the_print(child, "r0 hosts=0,gpus=0")  # the console opened by itself in rank 0, on h1
    finally:
        child.close(force=True)
    assert "[r1 hosts=1,gpus=0] rank 1 ran" in text
    assert child.exitstatus == 0
    assert "meshdbg host: host 0, rank 0" in (tmp_path / "h1.err").read_text()
