"""`.pdbrc` in the home folder and in the current folder is read as local pdb reads it
(readrc=True: home first, then the current folder, run at each new pdb's first stop), unless
MESHDBG_READRC=0; and by a pdb the program makes itself as that pdb reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e import Server
from parity import local_transcript, remote_transcript

HOME_RC = "# a person's own aliases\nalias show p ('shown', %1)\n"
FOLDER_RC = "b visit\n# the job's own breakpoint\n"
LINES = ["show 5", "c", "show n", "c", "cl 1", "c"]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home, job = tmp_path / "home", tmp_path / "job"
    home.mkdir()
    job.mkdir()
    (home / ".pdbrc").write_text(HOME_RC)
    (job / ".pdbrc").write_text(FOLDER_RC)
    return job, {"HOME": str(home)}


def test_both_pdbrc_files_act_remotely_as_locally(server: Server, folders: tuple[Path, dict[str, str]]) -> None:
    job, env = folders
    expected = local_transcript("commands_block.py", LINES, cwd=job, env=env)
    assert "('shown', 5)" in expected and "Breakpoint 1 at" in expected  # the oracle read both files
    got, _ = remote_transcript(server, "commands_block.py", LINES, cwd=job, env=env)
    assert got == expected


def test_meshdbg_readrc_0_reads_neither(server: Server, folders: tuple[Path, dict[str, str]]) -> None:
    job, env = folders
    got, _ = remote_transcript(server, "commands_block.py", ["show 5", "c"], cwd=job, env=dict(env, MESHDBG_READRC="0"))
    assert "*** SyntaxError" in got and "Breakpoint 1" not in got


def test_a_pdbrc_that_continues_acts_as_locally_and_leaves_no_session_behind(server: Server, tmp_path: Path) -> None:
    (tmp_path / ".pdbrc").write_text("b visit\ncontinue\n")
    lines = ["p n", "c", "p n", "cl 1", "c"]
    expected = local_transcript("commands_block.py", lines, cwd=tmp_path, env={"HOME": str(tmp_path / "nowhere")})
    got, ids = remote_transcript(server, "commands_block.py", lines, cwd=tmp_path, env={"HOME": str(tmp_path / "nowhere")})
    assert got == expected and "visit()" in got
    assert len(set(ids)) == 2  # one session per stop in visit; the one the rc file continued from is gone


@pytest.mark.parametrize("args, read", [(("readrc",), True), (("norc",), False), (("readrc", "json*"), True)],
                         ids=["its-pdbrc", "readrc-False", "skip-json"])
def test_a_pdb_the_program_makes_keeps_its_choices_remotely(server: Server, folders: tuple[Path, dict[str, str]],
                                                            args: tuple[str, ...], read: bool) -> None:
    """`pdb.Pdb(readrc=False, skip=[...]).set_trace()` in a rank of `meshdbg run` (its bootstrap
    routes the program's own pdb to a session): the session's pdb reads the .pdbrc files that
    pdb would (none with readrc=False) and skips the modules it would (`s` steps over json's
    code, into `visit`). Its pdb read both files and stepped into json whatever the program asked."""
    job, env = folders
    lines = ["show 5", *["s"] * 7, "c", "cl 1", "c"]
    expected = local_transcript("own_pdb.py", lines, *args, cwd=job, env=env)
    assert ("('shown', 5)" in expected) is read and ("json/__init__.py" in expected) is (len(args) == 1), expected
    got, _ = remote_transcript(server, "own_pdb.py", lines, *args, cwd=job, env=env, bootstrap=True)
    assert got == expected
