"""A program that closed its stdout and stderr stops as one that kept them
(meshdbg.worker.stdio_numbers): the same lines, the same transcript.

With fd 1 and 2 closed, gRPC's descriptors took their numbers and meshdbg's output capture put
its pipe over them: the session never answered, and gRPC logged its poller's failure thousands of
times a second into it.
"""

from __future__ import annotations

import pytest

from e2e import Server
from parity import remote_transcript

LINES = ["p z", "n", "p z", "c"]


@pytest.mark.parametrize("bootstrap", [False, True], ids=["hook", "run's bootstrap"])
def test_a_program_with_its_stdout_and_stderr_closed_stops_as_one_with_them_open(server: Server,
                                                                                bootstrap: bool) -> None:
    kept, _ = remote_transcript(server, "closed_stdio.py", LINES, "keep", bootstrap=bootstrap)
    assert "(Pdb) 5\n" in kept, kept  # (3.13 stops on the breakpoint() line itself: `n` then reaches `z = 6`)
    closed, _ = remote_transcript(server, "closed_stdio.py", LINES, "close", bootstrap=bootstrap)
    assert closed == kept


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
@pytest.mark.parametrize("bootstrap", [False, True], ids=["hook", "run's bootstrap"])
def test_stepping_over_awaits_after_closing_stdout_and_stderr_goes_as_with_them_open(server: Server,
                                                                                   bootstrap: bool, loop: str) -> None:
    """The event loop made after the close takes fds 1 and 2 (asyncio's self-pipe, uvloop's
    eventfd): the capture put its pipes over them, so `n` over an `await` stepped into
    selectors.py and the next `n` killed the rank."""
    if loop == "uvloop":
        pytest.importorskip("uvloop")
    lines = ["n", "n", "p x", "n", "n", "p x", "n", "c"]
    kept, _ = remote_transcript(server, "closed_stdio_asyncio.py", lines, "keep", loop, bootstrap=bootstrap)
    assert "(Pdb) 2\n" in kept, kept
    closed, _ = remote_transcript(server, "closed_stdio_asyncio.py", lines, "close", loop, bootstrap=bootstrap)
    assert closed == kept
