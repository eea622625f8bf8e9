"""A bench worker: stops at `breakpoint()` ROUNDS times, with `x` and `rank` in scope.

    python bench/bench_core_worker.py ROUNDS WORK_S

Run by bench_core.py with PYTHONBREAKPOINT=meshdbg.worker.remote_breakpointhook and the MESHDBG_*
environment, so each round opens a real meshdbg session; looping lets the bench time several
`continue` rounds without restarting processes. Between two breakpoints the worker "works"
(sleeps) WORK_S seconds, as a training step would, so the next session's setup does not
compete with the `continue` being timed.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    rounds, work_s = int(sys.argv[1]), float(sys.argv[2])
    rank = int(os.environ["MESHDBG_RANK"])
    for round_index in range(rounds):
        x = {"rank": rank, "round": round_index, "loss": 0.125 * rank}  # what `p x` prints
        breakpoint()
        time.sleep(work_s)


if __name__ == "__main__":
    main()
