"""A stop deep in a recursion: where local pdb stops, meshdbg stops (meshdbg.worker.headroom).

Its first stop in a process imports meshdbg's worker side and opens a stream there, some fifty
frames deeper than local pdb's import: 75 frames short of the recursion limit, local pdb
stopped and meshdbg raised RecursionError into the program (a rank that does not catch it dies).
"""

from __future__ import annotations

import pytest

from e2e import Server
from parity import local_transcript, remote_transcript

LINES = ["p n", "up", "p n", "c"]


@pytest.mark.parametrize("bootstrap", [False, True], ids=["hook", "run's bootstrap"])
def test_a_stop_local_pdb_makes_deep_in_a_recursion_meshdbg_makes_too(server: Server, bootstrap: bool) -> None:
    expected = local_transcript("deep_recursion.py", LINES)
    assert "(Pdb) 0\n" in expected, expected  # local pdb stopped there (and printed n)
    got, _ = remote_transcript(server, "deep_recursion.py", LINES, bootstrap=bootstrap)
    assert got == expected
