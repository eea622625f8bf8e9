"""The last line of a `meshdbg run` that failed says how every other rank ended."""

from meshdbg.debugger.format import status_text
from meshdbg.debugger.run import how_ranks_ended


def test_statuses_are_grouped_by_rank_and_named_as_a_shell_would() -> None:
    assert how_ranks_ended({0: 143, 1: 143, 2: 143}) == "ranks 0-2 SIGTERM"
    assert how_ranks_ended({3: 0, 0: 0, 2: 137}) == "ranks 0,3 status 0, rank 2 SIGKILL"
    assert how_ranks_ended({}) == ""
    assert (status_text(1), status_text(128 + 99), status_text(130)) == ("status 1", "signal 99", "SIGINT")


def test_ranks_lost_with_their_host_are_named_so() -> None:
    assert how_ranks_ended({0: 143, 2: 255, 3: 255}, lost={2, 3}) == "rank 0 SIGTERM, ranks 2-3 host lost"
