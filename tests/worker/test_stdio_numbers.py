"""meshdbg.worker.stdio_numbers: meshdbg's descriptors are made above 2, and the program's
standard ones are left as it left them (tests/parity/test_closed_stdio.py has the stop it keeps
answering, tests/worker/test_fd_capture.py a program that reopens its fd 1). In a child process:
this one's descriptors are pytest's."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from meshdbg.worker.stdio_numbers import printed_to

CHILD = """
import json, os, sys
from meshdbg.worker.stdio_numbers import StandardNumbersHeld, above_standard, dup_above_standard
report = os.dup(1)
closing = [int(fd) for fd in sys.argv[1:]]
for fd in closing:
    os.close(fd)
with StandardNumbersHeld():
    held = [os.readlink(f"/proc/self/fd/{fd}") for fd in closing]
    made = list(os.pipe())  # what gRPC makes meanwhile
moved = [above_standard(fd) for fd in os.pipe()]  # what meshdbg makes itself
copy = dup_above_standard(report)
standard = [os.path.exists(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
os.write(report, json.dumps({"held": held, "made": made, "moved": moved, "copy": copy, "standard": standard,
                             "next": os.open(os.devnull, os.O_RDONLY)}).encode())
"""


def after_closing(*fds: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, fds)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_descriptors_made_while_held_or_moved_are_above_the_closed_standard_ones() -> None:
    got = after_closing(1, 2)
    assert got["held"] == ["/dev/null", "/dev/null"]
    assert min(got["made"] + got["moved"] + [got["copy"]]) > 2, got


def test_the_programs_closed_standard_descriptors_stay_closed_and_its_next_open_takes_the_lowest() -> None:
    got = after_closing(0, 1, 2)
    assert got["standard"] == [False, False, False]
    assert got["next"] == 0  # as without meshdbg: the program that closed it may reopen it so


def test_open_standard_descriptors_are_left_as_they_are() -> None:
    got = after_closing()
    assert got["held"] == [] and got["standard"] == [True, True, True]


def test_a_stream_is_printed_to_but_an_event_loops_own_descriptors_are_not(tmp_path: Path) -> None:
    """What the output capture goes over (printed_to): files, pipes, terminals and blocking
    sockets (systemd's journal hands stdout over as one), never a closed number, a
    non-blocking socket (asyncio's self-pipe) or an anonymous inode (an eventfd)."""
    read, write = os.pipe()
    blocking, non_blocking = socket.socketpair()
    non_blocking.setblocking(False)
    event = os.eventfd(0)
    file = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT, 0o600)
    closed = os.dup(write)
    os.close(closed)
    try:
        assert printed_to(write) and printed_to(file) and printed_to(blocking.fileno())
        assert not printed_to(non_blocking.fileno()) and not printed_to(event) and not printed_to(closed)
    finally:
        for fd in (read, write, event, file):
            os.close(fd)
        blocking.close()
        non_blocking.close()
