"""`meshdbg attach --plain` ends cleanly however its session ends while it waits for a line.

Its stdin stays open with nothing to read (a pipe whose writer is silent, or a terminal nobody
types in), so a read is under way when the session ends: the worker dies,
another client continues the rank, or the server stops. It must exit with a status and one
line saying why; before, the interpreter aborted at exit ("Fatal Python error:
_enter_buffered_busy ... daemon threads", SIGABRT) because that thread held sys.stdin's lock.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import start_server, stop_process

ENDINGS = {
    "its worker dies": (lambda server: server.workers[0].kill(), 1, "meshdbg: session ended (the worker went away)"),
    "another client continues it": (lambda server: server.cli("continue"), 0,
                                     "meshdbg: rank 0 was continued by another client; detached"),
    "the server stops": (lambda server: server.process.terminate(), 1, "meshdbg: session ended (the server stopped)"),
}


def silent_stdin(kind: str) -> tuple[int, int]:
    """(the fd the attach reads, the fd the test keeps open so it never sees EOF)."""
    if kind == "pipe":
        read, write = os.pipe()
        return read, write
    primary, secondary = os.openpty()
    return secondary, primary


@pytest.mark.parametrize("stdin", ["pipe", "terminal"])
@pytest.mark.parametrize("ending", ENDINGS, ids=list(ENDINGS))
def test_attach_plain_ends_with_one_line_and_a_status(tmp_path: Path, ending: str, stdin: str) -> None:
    end, status, line = ENDINGS[ending]
    server = start_server(tmp_path)
    reading, kept = silent_stdin(stdin)
    try:
        server.worker("hold.py", 0)
        server.wait_sessions(1)
        attach = subprocess.Popen([sys.executable, "-m", "meshdbg", "attach", "--plain", "0"], env=server.env,
                                  stdin=reading, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.close(reading)
        first = attach.stdout.readline()
        assert first.startswith("meshdbg: attached to rank 0"), first
        end(server)
        out, err = attach.communicate(timeout=15)
    finally:
        os.close(kept)
        for worker in server.workers:
            stop_process(worker)
        if server.process.poll() is None:
            server.process.terminate()
        server.process.communicate(timeout=10)
    assert err == "" and attach.returncode == status, (attach.returncode, err)
    last = out.rstrip("\n").splitlines()[-1]
    assert last.startswith(line), out
    # after "attached": the one line saying why it ended (and, as the server stops, the worker's own
    # line on its stderr, which an open session carries as it carries all the program's output)
    ours = [line for line in out.splitlines() if line.startswith("meshdbg: ") and "; continuing" not in line]
    assert len(ours) == 1, out


@pytest.mark.parametrize("last", ["detach\n", "detach", ""], ids=["detach", "detach without a newline", "end of file"])
def test_attach_plain_reads_its_lines_from_a_regular_file(tmp_path: Path, last: str) -> None:
    """A regular file (or /dev/null) cannot be polled and never makes a read wait: the event
    loop reads it at once, a last line without its newline included."""
    server = start_server(tmp_path)
    try:
        server.worker("hold.py", 0)
        server.wait_sessions(1)
        script = tmp_path / "lines.txt"
        script.write_text(f"p 6 * 7\np 'a' * 3\n{last}")
        with open(script) as stdin:
            attach = subprocess.run([sys.executable, "-m", "meshdbg", "attach", "--plain", "0"], env=server.env,
                                    stdin=stdin, capture_output=True, text=True, timeout=30)
        with open(os.devnull) as stdin:
            empty = subprocess.run([sys.executable, "-m", "meshdbg", "attach", "--plain", "0"], env=server.env,
                                   stdin=stdin, capture_output=True, text=True, timeout=30)
        assert [session["state"] for session in server.sessions()] == ["stopped"]  # left paused
    finally:
        server.close()
    assert (attach.returncode, attach.stderr, empty.returncode, empty.stderr) == (0, "", 0, ""), (attach, empty)
    assert "(Pdb) 42\n(Pdb) 'aaa'\n(Pdb) " in attach.stdout, attach.stdout
    # The last prompt's line ends, as pdb ends it at the end of its input: no Enter echoed it.
    assert attach.stdout.endswith("(Pdb) \n") and empty.stdout.endswith("(Pdb) \n"), (attach.stdout, empty.stdout)


def test_attach_plain_gives_a_pipe_back_as_it_found_it_to_the_next_reader(tmp_path: Path) -> None:
    """A script's pipe, shared with the commands after the attach: the attach leaves what it
    did not read in the pipe, and leaves the pipe blocking (its event loop's watch of stdin
    made it non-blocking: `cat` after it failed with EAGAIN, "Resource temporarily unavailable")."""
    server = start_server(tmp_path)
    reading, writing = os.pipe()
    try:
        server.worker("hold.py", 0)
        server.wait_sessions(1)
        attach = subprocess.Popen([sys.executable, "-m", "meshdbg", "attach", "--plain", "0"], env=server.env,
                                  stdin=reading, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert attach.stdout.readline().startswith("meshdbg: attached to rank 0")
        os.write(writing, b"p 6 * 7\n")
        shown = [attach.stdout.readline() for _ in range(3)]  # the position's two lines, then the prompt and 42
        assert shown[-1] == "(Pdb) 42\n", shown
        os.write(writing, b"detach\n")
        out, err = attach.communicate(timeout=15)
        os.write(writing, b"for the next command\n")
        blocking = os.get_blocking(reading)
        os.close(writing)
        with os.fdopen(reading) as rest:
            left = rest.read()
    finally:
        server.close()
    assert (attach.returncode, err) == (0, ""), (attach.returncode, err, out)
    assert blocking
    assert left == "for the next command\n"
