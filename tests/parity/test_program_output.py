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


def test_lines_printed_in_pieces_to_stdout_and_stderr_stay_whole(server: Server) -> None:
    """Unbuffered (`-u`, as the worker runs here), a print writes "out", " ", "3", "\\n" apart;
    fd 1 and fd 2 are two pipes, so the session could show a stderr line inside a stdout line
    unless each line is written whole while the session is open."""
    worker = server.worker(str(SCRIPTS / "output_pieces.py"))
    server.wait_sessions(1)
    result = server.cli("cast", "0", "until 11")
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()[1:] if not line.lstrip().startswith((">", "->"))]
    for stream in ("out", "err"):  # whole lines, each stream in its order (the two pipes' lines may interleave)
        assert [line for line in lines if not line.startswith("out" if stream == "err" else "err")] == [
            f"{stream} {i}" for i in range(400)]
    assert server.cli("continue").returncode == 0
    worker.communicate(timeout=20)
