"""py-spy is started without a fork of the process that asks (the server, under `meshdbg run`).

uvloop's spawn (the loop `meshdbg run` serves on) forks the whole server and holds the GIL
until the child has exec'd: on a loaded machine, `stacks` froze the server for seconds and its
clients' keepalive pings went unanswered (their connections dropped: "ping timeout"). A fork
of the whole process runs Python's fork hooks (`os.register_at_fork`); subprocess's vfork,
from a thread, runs none.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from typing import Iterator

import uvloop

from meshdbg.host.pyspy import PySpyError, py_spy_stacks

STUCK = "import re; print('ready', flush=True); re.match(r'(a+)+$', 'a' * 64 + 'b')"
_forks: list[str] | None = None  # the threads this process forked from, while a test counts them


def _count_fork() -> None:
    if _forks is not None:
        _forks.append(threading.current_thread().name)


os.register_at_fork(before=_count_fork)  # (a hook cannot be removed: one, counting only when asked)


@contextlib.contextmanager
def stuck_process() -> Iterator[int]:
    """The pid of a Python process stuck in a regex, holding the GIL in C (killed after)."""
    stuck = subprocess.Popen([sys.executable, "-c", STUCK], stdout=subprocess.PIPE, text=True)
    try:
        assert stuck.stdout is not None and stuck.stdout.readline() == "ready\n"
        yield stuck.pid
    finally:
        stuck.kill()
        stuck.wait()


def test_py_spy_samples_a_process_stuck_in_c_without_forking_the_caller() -> None:
    global _forks
    with stuck_process() as pid:
        _forks = forks = []
        try:
            threads = uvloop.run(py_spy_stacks(pid, all_threads=False, timeout=10))
        finally:
            _forks = None
    (main,) = threads
    assert main.frames[-1].function == "match"  # sampled where it is stuck, holding the GIL in C
    assert forks == [], f"the caller was forked from {forks}"


def test_py_spy_past_its_deadline_is_a_clear_error() -> None:
    """A deadline py-spy cannot meet: PySpyError saying so, at the deadline."""
    async def sample(pid: int) -> str:
        try:
            await py_spy_stacks(pid, all_threads=False, timeout=0.0001)
        except PySpyError as exc:
            return str(exc)
        return "no error"

    with stuck_process() as pid:
        assert asyncio.run(sample(pid)) == "py-spy gave no stacks within 0.0001 s"
