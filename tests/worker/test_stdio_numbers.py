"""meshdbg.worker.stdio_numbers: a closed standard descriptor is opened on /dev/null before meshdbg
opens its own, so none of meshdbg's takes its number (tests/parity/test_closed_stdio.py has the
stop it keeps answering). In a child process: this one's descriptors are pytest's."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = """
import json, os, sys
closing = [int(fd) for fd in sys.argv[1:]]
report = os.dup(1)
for fd in closing:
    os.close(fd)
from meshdbg.worker.stdio_numbers import reserve_closed
reserve_closed()
read, write = os.pipe()  # what meshdbg opens next
os.write(report, json.dumps({"standard": [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)],
                             "inheritable": [os.get_inheritable(fd) for fd in (0, 1, 2)],
                             "pipe": [read, write]}).encode())
"""


def reserved_after_closing(*fds: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, fds)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_closed_stdout_and_stderr_are_opened_on_dev_null_and_meshdbgs_descriptors_come_after() -> None:
    got = reserved_after_closing(1, 2)
    assert got["standard"][1:] == ["/dev/null", "/dev/null"]
    assert got["inheritable"] == [True, True, True]
    assert min(got["pipe"]) > 2


def test_a_closed_stdin_too() -> None:
    got = reserved_after_closing(0, 1, 2)
    assert got["standard"] == ["/dev/null"] * 3
    assert min(got["pipe"]) > 2


def test_open_standard_descriptors_are_left_as_they_are() -> None:
    got = reserved_after_closing()
    assert "/dev/null" not in got["standard"][1:]  # (the pipes this test reads)
