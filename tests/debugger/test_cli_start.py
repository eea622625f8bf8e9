"""A client verb loads only what it uses: no launcher, console, scheduler or prompt_toolkit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("meshdbg.debugger.mesh", "meshdbg.debugger.run", "meshdbg.debugger.console", "meshdbg.debugger.service",
         "meshdbg.worker", "prompt_toolkit", "pygments", "secrets")


@pytest.mark.parametrize("argv", [["list", "--json"], ["cast", "all", "p 1"], ["continue"]])
def test_client_verbs_import_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    code = ("import sys\nfrom meshdbg.debugger import cli\n"
            f"status = cli.main({argv!r})\n"
            f"print(status, sorted(m for m in sys.modules if m.startswith({HEAVY!r})))\n")
    env = dict(os.environ, MESHDBG_ADDR="127.0.0.1:1", MESHDBG_TOKEN="t")  # nothing listens on port 1
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "3 []", done.stdout + done.stderr
    assert "no meshdbg server reachable at 127.0.0.1:1" in done.stderr
