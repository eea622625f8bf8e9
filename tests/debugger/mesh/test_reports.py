"""What `interrupt` and `compare` say about the ranks they could not reach, on a real mesh.

stuck.py: ranks 0 and 1 wait on an Event (in C: they cannot break in until it returns), rank
2 spins in Python (it can), rank 3 is stuck in a regex in C holding the GIL (it cannot),
rank 4 is stopped in pdb already.
"""

from __future__ import annotations

import json
from pathlib import Path

from mesh_helpers import start_run


def test_interrupt_names_who_could_not_break_in_and_compare_who_it_left_out(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "procs=5", "stuck.py")
    try:
        run.wait_workers(lambda w: len(w) == 5 and w[4]["state"] == "stopped"
                         and all(w[r]["state"] == "running" for r in range(4)), "rank 4 stopped, the others running")
        done = run.cli("interrupt", "--json", "all")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["asked"] == [0, 1, 2, 3] and report["not_asked"] == {"already stopped": [4]}
        assert {0, 1, 3} <= set(report["not_stopped"]) and set(report["now_stopped"]) <= {2}  # 0-1 wait in C
        run.wait_workers(lambda w: w[2]["state"] == "stopped", "rank 2 interrupted")
        text = run.cli("interrupt", "ranks(2,4)")
        assert text.returncode == 1 and "ranks 2,4 already stopped" in text.stderr, text.stderr

        compared = run.cli("compare", "all", "RANK * 0")
        assert compared.returncode == 0, compared.stderr
        assert compared.stdout.splitlines() == ["ranks 2,4 (2): 0", "not evaluated: ranks 0-1,3 (running)"]
        failing = run.cli("compare", "all", "1 / (RANK - 2)")
        assert failing.stdout.splitlines() == ["rank 4: 0.5", "rank 2: error: ZeroDivisionError: division by zero",
                                               "not evaluated: ranks 0-1,3 (running)"], failing.stdout
    finally:
        run.kill()
