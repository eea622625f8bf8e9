"""A bench worker: stops at `breakpoint()` ROUNDS times, with `x` and `rank` in scope.

Run by bench_core.py with PYTHONBREAKPOINT=worker.remote_breakpointhook and the MESHDBG_*
environment, so each round opens a real meshdbg session; looping lets the bench time several
`continue` rounds without restarting processes.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    rounds = int(sys.argv[1])
    rank = int(os.environ["MESHDBG_RANK"])
    for round_index in range(rounds):
        x = {"rank": rank, "round": round_index, "loss": 0.125 * rank}  # what `p x` prints
        breakpoint()


if __name__ == "__main__":
    main()
