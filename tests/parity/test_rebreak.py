"""breakpoint() reached while pdb steps continues in the same session, exactly as local pdb."""

from __future__ import annotations

import pytest

from e2e import Server
from parity import local_transcript, remote_transcript
from test_parity import CASES

STEPS = ["n", "n", "n", "n", "n", "where", "n", "c", "c", "c", "c"]


@pytest.mark.parametrize("case", ["loop", "generator", "coroutine", "thread"])
def test_stepping_onto_breakpoint_stays_in_one_session_like_local_pdb(server: Server, case: str) -> None:
    lines = STEPS if case != "coroutine" else STEPS[:4] + ["c", "c"]
    expected = local_transcript("rebreak.py", lines, case)
    got, ids = remote_transcript(server, "rebreak.py", lines, case)
    assert got == expected
    assert len(set(ids[: lines.index("c") + 1])) == 1  # one session until `c` lets the rank run


@pytest.mark.parametrize("case", ["rebreak_loop.py", "async_handoff.py", "assign_locals.py", "docs_queue_thread.py"])
def test_a_rank_under_the_bootstrap_prints_what_local_pdb_prints(server: Server, case: str) -> None:
    """As `meshdbg run` runs ranks: the hook installed by the bootstrap, the script run by runpy."""
    expected = local_transcript(case, CASES[case])
    got, _ = remote_transcript(server, case, CASES[case], bootstrap=True)
    assert got == expected
