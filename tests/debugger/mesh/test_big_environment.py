"""`meshdbg run` starts every rank however large the environment that each spawn carries.

Each rank's spawn request to the fork server (meshdbg.host.spawner) carries the rank's whole
environment, and under `meshdbg run` (uvloop's loop) the socket to the fork server is
non-blocking: 64 ranks of a 4 KB environment filled it while the fork server forked, and the
run failed with "cannot reach the fork server: [Errno 11] Resource temporarily unavailable".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mesh_helpers import client_env

RANKS = 12
BIG = "x" * 64_000  # a 64 KB variable: twelve spawn requests are more than the socket holds


def test_every_rank_starts_with_a_large_environment(tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text('import os\nprint("rank", os.environ["RANK"], "ran", len(os.environ["BIG"]))\n')
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", f"gpus={RANKS}", str(script)],
                          env={**client_env(tmp_path), "BIG": BIG}, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ran = sorted(line for line in done.stdout.splitlines() if line.endswith(f"ran {len(BIG)}"))
    assert ran == sorted(f"[r{rank} gpus={rank}] rank {rank} ran {len(BIG)}" for rank in range(RANKS)), done.stdout
