"""One rank of examples/pipeline_train.py, run once per schedule in one process.

    python each_schedule.py DIR KIND:STAGES_PER_RANK... -- EXAMPLE_ARGS...

For each case, the example's `main` trains one step with `--schedule KIND --stages-per-rank N
--steps 1`, meets the other ranks through a rendezvous file of the case's own, and dumps its
loss and gradients into DIR/KIND-N. A process imports torch once for all cases (3 s of CPU a
process on a 2-core machine), where one launch per case would import it again each time.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
import pipeline_train  # noqa: E402


def main(argv: list[str]) -> int:
    folder, *rest = argv
    separator = rest.index("--")
    cases, common = rest[:separator], rest[separator + 1:]
    for case in cases:
        kind, _, stages_per_rank = case.partition(":")
        dump = Path(folder) / f"{kind}-{stages_per_rank}"
        dump.mkdir(exist_ok=True)
        status = pipeline_train.main([*common, "--schedule", kind, "--stages-per-rank", stages_per_rank, "--steps", "1",
                                      "--init-method", f"file://{dump / 'rendezvous'}", "--dump-grads", str(dump)])
        if status:
            print(f"each_schedule: {case} exited with status {status}", file=sys.stderr)
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
