"""meshdbg.pth arms the process-group registration only where the hook names meshdbg, and
costs nothing elsewhere (it runs at every interpreter start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import with_meshdbg_pth

PROBE = ("import sys; print(sorted(m for m in sys.modules if m.startswith('meshdbg')));"
         "import torch.distributed as d; print(getattr(d.init_process_group, '_meshdbg_registers', False),"
         " getattr(d.distributed_c10d.init_process_group, '_meshdbg_registers', False))")


def probe(tmp_path: Path, **env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONBREAKPOINT"}
    result = subprocess.run([sys.executable, "-c", PROBE], env=dict(clean, PYTHONPATH=with_meshdbg_pth(tmp_path), **env),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


@pytest.mark.torch
def test_the_pth_wraps_init_process_group_only_where_the_hook_names_meshdbg(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    assert probe(tmp_path) == ["[]", "False False"]  # nothing of meshdbg imported, torch left alone
    assert probe(tmp_path, PYTHONBREAKPOINT="pdb.set_trace") == ["[]", "False False"]
    armed = probe(tmp_path, PYTHONBREAKPOINT="meshdbg.set_trace")
    assert armed[1] == "True True" and "meshdbg.worker.autostart" in armed[0]
    assert "meshdbg.worker.mesh.agent" not in armed[0]  # nothing heavy until a group is made
