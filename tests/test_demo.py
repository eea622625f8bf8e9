"""The README's demo command works as shown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_tours_the_mesh_and_every_worker_finishes() -> None:
    result = subprocess.run([sys.executable, "examples/demo.py"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "hosts=1,gpus=1  stopped" in out
    assert "rank 2:\n  2.3125\nrank 3:\n  4.0625" in out
    assert "ranks 0-3 (4 ranks):\n  -0.25" in out
    assert "rank 3 losses [4.0625, 2.0312]" in out
    assert "workers exited with [0, 0, 0, 0]" in out
