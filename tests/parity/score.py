"""The parity score: of all the lines local pdb and meshdbg print over the whole parity corpus,
the share that are the same, on the Python running this.

    python tests/parity/score.py            # one line: python, cases, same, all, score, differing cases
    python tests/parity/score.py --json

The corpus is every case of test_parity.py and test_rebreak.py, CPython's own pdb doctests
(test_cpython_pdb.py), plus each documented difference driven as pdb lines (where a remote session must differ, so they count against the score). A
case's lines are compared in order (difflib's longest matching blocks); `all` counts the longer
of the two transcripts' lines, so a missing line and an extra line both count.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from cpython_pdb import doctest_cases, pdb_doctest_source  # noqa: E402
from e2e import serving  # noqa: E402
from parity import local_transcript, remote_transcript  # noqa: E402
from test_parity import CASES, script_of  # noqa: E402
from test_rebreak import STEPS  # noqa: E402

# The documented differences (README, "pdb remotely"), each as the lines that show it.
DIFFERENCES: dict[str, list[str]] = {
    "step_basic.py#quit": ["q"],
    "interact.py#interact": ["interact", "value * 2", "exit()", "p value", "c"],
    "help_all.py#help_pdb": ["help pdb", "c"],
    "run_off_end.py#off_the_end": ["n", "n", "n", "n"],
    "rebreak_loop.py#step_onto_breakpoint": ["n", "n", "n", "s", "s", "s", "c", "c", "c"],
    "step_basic.py#restart": ["restart", "p 1", "c"],
    "assign_locals.py#interact_assignment": ["interact", "x = 7", "exit()", "p x", "c"],
    "commands_block.py#resuming_block": ["b visit", "commands", "p ('CMDS', n)", "c", "c"],
    "surrogates.py#not_utf8": ["!print(bad)", "c"],  # the same, unless the worker's stdout is strict
}


def corpus(folder: Path) -> dict[str, tuple[str, list[str], tuple[str, ...]]]:
    """Every case: name -> (script, pdb lines, script arguments); CPython's doctests are
    written into `folder` as scripts."""
    cases = {name: (script_of(name), lines, ()) for name, lines in {**CASES, **DIFFERENCES}.items()}
    source = pdb_doctest_source()
    for doctest in doctest_cases(source) if source is not None else []:
        script = folder / f"{doctest.name}.py"
        script.write_text(doctest.script)
        cases[f"cpython:{doctest.name}"] = (str(script), doctest.lines, ())
    for case in ("loop", "generator", "coroutine", "thread"):
        lines = STEPS if case != "coroutine" else STEPS[:4] + ["c", "c"]
        cases[f"rebreak.py#{case}"] = ("rebreak.py", lines, (case,))
    return cases


def same_lines(local: str, remote: str) -> tuple[int, int]:
    """(lines the two transcripts share in order, lines of the longer one)."""
    a, b = local.splitlines(), remote.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()), max(len(a), len(b))


def score() -> dict:
    same = total = 0
    differing, failed = [], []
    with tempfile.TemporaryDirectory(prefix="meshdbg-parity-score-") as folder:
        os.environ["MESHDBG_RUNTIME_DIR"] = str(Path(folder) / "runtime")
        cases = corpus(Path(folder))
        with serving(Path(folder)) as server:
            for name, (script, lines, args) in sorted(cases.items()):
                local = local_transcript(script, lines, *args)
                try:
                    remote, _ = remote_transcript(server, script, lines, *args)
                except Exception as exc:  # a case that hangs or fails counts as all lines different
                    remote = ""
                    failed.append(f"{name} ({type(exc).__name__})")
                shared, longest = same_lines(local, remote)
                same, total = same + shared, total + longest
                if shared != longest:
                    differing.append(name)
    return {"python": sys.version.split()[0], "cases": len(cases), "same": same, "all": total,
            "score": round(same / total, 4), "differing": differing, "failed": failed}


def main() -> None:
    # gRPC's asyncio poller outlives each case's event loop and logs that once per case: noise here
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    result = score()
    if "--json" in sys.argv[1:]:
        print(json.dumps(result))
    else:
        print(f"Python {result['python']}: {result['same']}/{result['all']} lines the same = {result['score']:.2%} "
              f"over {result['cases']} cases; differing: {', '.join(result['differing']) or 'none'}; "
              f"failed: {', '.join(result['failed']) or 'none'}")


if __name__ == "__main__":
    main()
