"""The one line that names ranks left with why (meshdbg.debugger.format): `continue`'s ranks not
resumed, `cast`'s ranks not answering."""

from __future__ import annotations

from meshdbg.debugger.format import not_answering_text, not_resumed_text

STOPPED = "rank 1 (pid 41) is stopped (SIGSTOP) and not answering"
BUSY = "rank 3 is busy running another command"


def test_one_rank_is_its_why() -> None:
    assert not_answering_text([(1, STOPPED)]) == STOPPED
    assert not_resumed_text([(3, BUSY)]) == f"not resumed: {BUSY}"


def test_several_are_their_ranks_and_the_first_ones_why() -> None:
    assert not_answering_text([(1, STOPPED), (2, "rank 2 is not answering"), (5, "rank 5 is not answering")]) == \
        f"not answering: ranks 1-2,5 (the first: {STOPPED})"
    assert not_resumed_text([(1, STOPPED), (3, BUSY)]) == f"not resumed: ranks 1,3 (the first: {STOPPED})"
