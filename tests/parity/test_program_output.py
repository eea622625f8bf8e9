"""The program's own output in a remote session, as a local terminal shows it (issue 17, point 5).

Local pdb in a pseudo-terminal is the oracle: prints, stderr, raw writes to fd 1 and C's
printf between pdb's lines, in order. The worker of a private `serve` sends its fd 1 and 2
to the session while one is open, and to where they went before.
"""

from __future__ import annotations

from e2e import Server, stop_process
from parity import SCRIPTS, remote_transcript, terminal_transcript

LINES = ["n", "n", "n", "n", "n", "n", "p shout('p')", "!shout('bang')", "n", "n", "c"]


def test_program_output_shows_between_pdbs_lines_as_in_a_terminal(server: Server) -> None:
    expected = terminal_transcript("program_output.py", LINES)
    got, _ = remote_transcript(server, "program_output.py", LINES)
    assert "printf from C 1\n" in expected and "to stderr\n" in expected
    assert got == expected


def test_the_program_output_still_reaches_where_it_went_before(server: Server) -> None:
    worker = server.worker(str(SCRIPTS / "program_output.py"))
    server.wait_sessions(1)
    result = server.cli("cast", "0", "until 23")
    assert result.returncode == 0, result.stderr
    assert "plain print 1" in result.stdout and "printf from C 1" in result.stdout
    assert server.cli("continue").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert out == "plain print 1\nraw write to fd 1\nprintf from C 1\nno newline yetshout word\n then the rest\n"
    assert err == "to stderr\n"
    stop_process(worker)
