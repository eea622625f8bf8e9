"""Stacks of a process that cannot answer from inside, taken from outside with py-spy.

py-spy (a dependency; its wheel ships the binary) reads a Python process's stacks from its
memory, so it works while the process holds the GIL in C code (a catastrophic regex, a C
extension's loop) or is blocked before Python can run a handler. It runs on the rank's own host
against its pid: under `meshdbg run` the host agent that forked the rank runs it (in the run's
process for a single-host run, `meshdbg host` on another node), and under `serve` the server
samples the ranks on its own host. `--nonblocking`: the rank is never paused or signalled.
Reading another process's memory takes ptrace rights: the same user with
/proc/sys/kernel/yama/ptrace_scope 0, or root / CAP_SYS_PTRACE.

py-spy is started from a thread by `subprocess`, not by the event loop: uvloop's spawn (the
server's loop under `meshdbg run`) forks the whole server and holds the GIL until the child has
exec'd. On a loaded machine that froze the server for seconds, long enough for its clients'
keepalive pings to go unanswered and their connections to drop. `subprocess` uses vfork: no
copy of the server, and the loop runs on meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import weakref

from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import StackSource
from meshdbg.worker.stacks import shown, thread_stacks

PROGRAM = str(StackSource.PY_SPY)  # the source is named after the program that takes the stacks
CONCURRENCY = 8  # a mesh of stuck ranks must not start 64 py-spys on 2 cores at once
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


class PySpyError(MeshdbgError):
    """py-spy is missing, failed, or did not finish in time."""


def py_spy_binary() -> str | None:
    """The py-spy installed beside this Python (the dependency), else one on PATH."""
    here = os.path.dirname(sys.executable)
    return shutil.which(PROGRAM, path=os.pathsep.join([here, os.environ.get("PATH", "")]))


async def py_spy_stacks(pid: int, all_threads: bool, timeout: float) -> list[pb.ThreadStack]:
    """The stacks of process `pid` (its main thread's, or all), within `timeout` seconds."""
    binary = py_spy_binary()
    if binary is None:
        raise PySpyError("py-spy is not installed (pip install py-spy)")
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        async with asyncio.timeout_at(deadline), _slots.setdefault(loop, asyncio.Semaphore(CONCURRENCY)):
            # (past the deadline the thread is left to end on its own: its py-spy is killed then too)
            output = await asyncio.to_thread(_dump, binary, pid, max(deadline - loop.time(), 0.0))
    except (TimeoutError, subprocess.TimeoutExpired):
        raise PySpyError(f"py-spy gave no stacks within {timeout:g} s") from None
    return parse_dump(output, pid, all_threads)


def _dump(binary: str, pid: int, timeout: float) -> bytes:
    """`py-spy dump` of `pid`, killed after `timeout` (subprocess.TimeoutExpired): our py-spy, never the rank."""
    done = subprocess.run([binary, "dump", "--pid", str(pid), "--json", "--nonblocking"],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    if done.returncode != 0:
        first = next((line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()), "no output")
        raise PySpyError(f"py-spy failed: {first.removeprefix('Error: ')}")
    return done.stdout


def parse_dump(output: bytes, pid: int, all_threads: bool) -> list[pb.ThreadStack]:
    """`py-spy dump --json` → ThreadStacks (py-spy lists frames innermost first)."""
    try:
        threads = json.loads(output)
    except ValueError as exc:
        raise PySpyError(f"py-spy printed something that is not JSON ({exc})") from None
    chosen = []
    for thread in threads:
        name = thread.get("thread_name") or f"Thread {thread.get('thread_id')}"
        main = thread.get("os_thread_id") == pid
        if shown(name, main, all_threads):
            frames = [(f["filename"], f["name"], f["line"]) for f in reversed(thread.get("frames", []))]
            chosen.append((thread.get("os_thread_id") or 0, name, main, frames))
    return thread_stacks(chosen)
