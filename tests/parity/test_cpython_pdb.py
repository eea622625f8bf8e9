"""CPython's own pdb doctests (Lib/test/test_pdb.py of the Python running the tests), each run
through local pdb and through meshdbg with the same lines: an oracle this project did not
write (cpython_pdb.py says how a doctest becomes a script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cpython_pdb import DoctestCase, doctest_cases, pdb_doctest_source
from e2e import Server
from parity import local_transcript, remote_transcript

SOURCE = pdb_doctest_source()
CASES = doctest_cases(SOURCE) if SOURCE is not None else []


def test_this_pythons_pdb_doctests_are_found() -> None:
    """(pyenv's and python.org's builds install Lib/test, which CI's Pythons have; a distribution's
    Python may leave it to a package of its own, such as Debian's libpython3.X-testsuite.)"""
    if SOURCE is None:
        pytest.skip("this Python was installed without its test package (Lib/test/test_pdb.py)")
    assert len(CASES) >= 20, [case.name for case in CASES]


@pytest.mark.parametrize("case, bootstrap", [
    pytest.param(case, bootstrap, id=f"{case}-{'run' if bootstrap else 'hook'}")
    for case in CASES for bootstrap in (False, True) if bootstrap or not case.own_pdb])
def test_meshdbg_prints_what_local_pdb_prints_for_cpythons_pdb_doctests(server: Server, tmp_path: Path,
                                                                       case: DoctestCase, bootstrap: bool) -> None:
    """Through the breakpoint hook of a worker started by anything, and as `meshdbg run` runs
    a rank (its bootstrap runs the script as python does). A doctest's own `pdb.Pdb(skip=...)`
    only under the bootstrap, which routes it (the hook alone routes `breakpoint()`): the
    session's pdb skips the modules the doctest's would."""
    script = tmp_path / f"{case.name}.py"
    script.write_text(case.script)
    expected = local_transcript(str(script), case.lines)
    assert "(Pdb) " in expected, expected  # it stopped locally: a case that runs
    got, _ = remote_transcript(server, str(script), case.lines, bootstrap=bootstrap)
    assert got == expected
