"""meshdbg.worker.stdio_numbers: meshdbg's descriptors are made above 2, and the program's
standard ones are left as it left them (tests/parity/test_closed_stdio.py has the stop it keeps
answering, tests/worker/test_fd_capture.py a program that reopens its fd 1). In a child process:
this one's descriptors are pytest's."""

from __future__ import annotations

import json
import subprocess
import sys

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
