"""`meshdbg run --dap PORT`: the job's own server served to an IDE; ranks that exit end the child."""

from __future__ import annotations

import subprocess
import sys

import pytest

from e2e import SCRIPTS
from ide import Ide, attach


@pytest.mark.timeout(90)
def test_run_with_dap_serves_the_job_and_its_end_terminates_the_child(tmp_path) -> None:
    job = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--dap", "0", "--mesh", "gpus=2",
                            str(SCRIPTS / "ide_target.py")], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        lines = iter(job.stderr.readline, "")
        listening = next(line for line in lines if line.startswith("meshdbg dap: listening on 127.0.0.1:"))
        port = int(listening.strip().rsplit(":", 1)[1])
        configuration = "".join(next(lines) for _ in range(11))  # the launch.json snippet that follows
        assert '"type": "debugpy"' in configuration and f'"port": {port}' in configuration
        token = configuration.split('"token": "')[1].split('"')[0]
        parent = Ide(port)
        attach(parent, {"meshdbg": {"token": token}})
        child = Ide(port)
        attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
        for thread in (1, 2):
            child.event("stopped", threadId=thread)
        assert [t["name"] for t in child.ok("threads")["threads"]] == ["rank 0 (gpus=0)", "rank 1 (gpus=1)"]
        child.ok("continue", threadId=1)
        child.event("exited", timeout=20)
        child.event("terminated")
        assert job.wait(timeout=30) == 0
    finally:
        job.kill()
        job.communicate(timeout=10)
