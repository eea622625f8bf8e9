"""The pdb-parity harness: one script, the same pdb lines, through local pdb and through meshdbg.

Local pdb is the oracle (TESTING.md §2): `python SCRIPT < lines` with plain `breakpoint()`,
its output split at the `(Pdb) ` prompts; then the same script as a worker of a private
`meshdbg serve` with the remote hook, the lines sent one by one over the control API, each
reply one chunk. Both transcripts are normalised (object addresses) and compared chunk by
chunk. Scripts print to stderr only, so their own output (which a remote session leaves in
the rank's log) is not part of the comparison.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pexpect

from e2e import Server, stop_process, wait_for
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.connection import ConnectionInfo
from pty_child import PtyChild
from watching import watch_until

SCRIPTS = Path(__file__).parent / "scripts"

ADDRESS = re.compile(r"0x[0-9a-f]{6,}")
REPLY_S = 20.0
PROMPT = "(Pdb) "


def normalise(text: str) -> str:
    return ADDRESS.sub("0x…", text)


def local_env(**extra: str) -> dict[str, str]:
    """The environment local pdb runs in: the test's, without meshdbg's variables or its hook,
    with `extra` added."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("MESHDBG_", "PYTHONBREAKPOINT"))}
    return {**inherited, **extra}


def local_transcript(script: str, lines: list[str], *args: str, cwd: Path | None = None,
                     env: dict[str, str] | None = None) -> str:
    """What a terminal shows of local pdb and the program (stdout and stderr together), prompts
    included, for these lines on its stdin (run in `cwd` with `env` added to the environment,
    when given), up to the last prompt's reply when that reply ends pdb: what the program prints
    once no session is open is the rank's log, not a session's (see `until_pdb_ends`)."""
    done = subprocess.run([sys.executable, str(SCRIPTS / script), *args], input="".join(f"{line}\n" for line in lines),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, encoding="utf-8",
                          errors="replace", timeout=60,  # as a terminal shows bytes that are not UTF-8
                          env=local_env(PYTHONUNBUFFERED="1", **(env or {})), cwd=cwd)
    return until_pdb_ends(normalise(done.stdout), lines)


RESUMING = {"c", "cont", "continue", "q", "quit", "exit"}


def until_pdb_ends(text: str, lines: list[str]) -> str:
    """TEXT up to its last prompt when the last line typed resumes the program: what follows is
    the program running with no pdb in charge, which remotely is the rank's log."""
    if lines and lines[-1].strip() in RESUMING:
        cut = text.rfind("(Pdb) ")
        return text[:cut + len("(Pdb) ")] if cut >= 0 else text
    return text


class LocalPdb:
    """SCRIPT under local pdb, typed lines not echoed, its output unbuffered (as a terminal
    shows whole lines at once) and timed as it comes (on pipes, so every write is seen as it comes;
    tests/pty_child.py says why not pexpect.spawn). A terminal's Ctrl-C is `interrupt` (SIGINT)."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, str(SCRIPTS / script), *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        env=local_env(PYTHONUNBUFFERED="1"))
        self.came: list[tuple[float, bytes]] = []  # what it wrote, as it came
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for data in iter(functools.partial(os.read, self.process.stdout.fileno(), 4096), b""):
            self.came.append((time.monotonic(), data))

    @property
    def text(self) -> str:
        return b"".join(data for _, data in list(self.came)).decode(errors="replace")

    def when(self, offset: int) -> float:
        """When the text up to `offset` had come (the scripts write ASCII: characters are bytes)."""
        upto = 0
        for at, data in list(self.came):
            upto += len(data)
            if upto >= offset:
                return at
        raise AssertionError(f"nothing came up to {offset}")

    def wait_for(self, marker: str, count: int = 1) -> None:
        wait_for(lambda: self.text.count(marker) >= count, REPLY_S, f"local pdb's {marker!r} #{count}")

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{line}\n".encode())
        self.process.stdin.flush()

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def finish(self, line: str = "c") -> None:
        """`line` (it lets the script run to its end), then the script's end."""
        self.type(line)
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(REPLY_S)
        self._reader.join(REPLY_S)

    def __enter__(self) -> "LocalPdb":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.process.kill()
        self.process.wait()


def terminal_transcript(script: str, lines: list[str], *args: str) -> str:
    """What a person sees of local pdb in a terminal (stdout and stderr on one screen), typed
    lines not echoed, for these lines typed one at a time at each `(Pdb) ` prompt."""
    child = PtyChild([sys.executable, str(SCRIPTS / script), *args], env=local_env(TERM="dumb"), timeout=REPLY_S,
                     echo=False)
    text = ""
    try:
        for line in lines:
            child.expect_exact("(Pdb) ")
            text += child.before + "(Pdb) "
            child.sendline(line)
        child.expect(pexpect.EOF)
        text += child.before
    finally:
        child.close(force=True)
    return normalise(text.replace("\r\n", "\n"))


def bootstrap_worker(server: Server, script: str, *args: str, cwd: Path | None = None,
                     env: dict[str, str] | None = None) -> subprocess.Popen:
    """SCRIPT as `meshdbg run` runs a rank: under the worker bootstrap, which installs the hook
    itself (no PYTHONBREAKPOINT import at each `breakpoint()`) and runs the script with runpy."""
    env = dict(server.env, MESHDBG_RANK="0", MESHDBG_COORDS="", PYTHONUNBUFFERED="1", **(env or {}))
    worker = subprocess.Popen([sys.executable, "-m", "meshdbg.worker.mesh.bootstrap", str(SCRIPTS / script), *args],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True, cwd=cwd)
    server.workers.append(worker)
    return worker


def remote_transcript(server: Server, script: str, lines: list[str], *args: str, cwd: Path | None = None,
                      env: dict[str, str] | None = None, bootstrap: bool = False) -> tuple[str, list[int]]:
    """The same through meshdbg: the first stop, then each line's prompt and reply; and the
    session ids that answered, line by line (`bootstrap`: the worker runs as under `meshdbg run`)."""
    worker = (bootstrap_worker(server, script, *args, cwd=cwd, env=env) if bootstrap else
              server.worker(str(SCRIPTS / script), 0, "", *args, env=dict(server.env, **(env or {})), cwd=cwd))
    try:
        server.wait_sessions(1)
        return asyncio.run(_drive(server, lines, worker))
    finally:
        stop_process(worker)


async def _next_stop(client: ControlClient, worker: subprocess.Popen) -> bool:
    """Wait for the worker's next stop (True), or for it to exit (False)."""
    stop = asyncio.ensure_future(watch_until(client, {"stopped": [0]}))
    exit = asyncio.ensure_future(asyncio.to_thread(worker.wait, REPLY_S))
    done, _ = await asyncio.wait([stop, exit], timeout=REPLY_S, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    return stop in done and not stop.cancelled()


async def _drive(server: Server, lines: list[str], worker: subprocess.Popen) -> tuple[str, list[int]]:
    text, ids = "", []
    async with ControlClient(ConnectionInfo(server.addr, server.env["MESHDBG_TOKEN"])) as client:
        async with contextlib.AsyncExitStack() as stack:
            pdb = await stack.enter_async_context(client.attach(rank=0))
            text, prompt = pdb.replay.output, pdb.replay.prompt
            for line in lines:
                if pdb.ended:  # after `c`: the next stop is a new session, unless the script ended
                    if not await _next_stop(client, worker):
                        break
                    pdb = await stack.enter_async_context(client.attach(rank=0, following=True))
                    text, prompt = text + pdb.replay.output, pdb.replay.prompt
                reply = await asyncio.wait_for(pdb.send(line), REPLY_S)
                text += prompt + reply.output
                prompt = "" if reply.ended else reply.prompt
                ids.append(pdb.session.id)
            text += prompt
    return until_pdb_ends(normalise(text), lines), ids
