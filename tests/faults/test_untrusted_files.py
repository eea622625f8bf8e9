"""A connection file or runtime folder another user could have written is refused by everyone.

Another local user plants a connection file (in /tmp, a team folder) naming a server of theirs:
our workers must not join it (it could run code in them) and our clients must not send it the
token they hold. As root the tests make the "other user" by chown to nobody (65534) or by
group/other write bits; the planted address is a plain socket of the test's, which counts
every connection made to it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from e2e import SCRIPTS

NOBODY = 65534
VERBS = (("list",), ("cast", "all", "p 1"), ("continue",), ("interrupt", "all"), ("stacks",), ("compare", "all", "1"),
         ("watch",), ("attach", "--plain", "0"), ("servers",))

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a file of another user's")


@pytest.fixture
def trap() -> Iterator[socket.socket]:
    """A listening socket standing for the planted server: any connection to it is a leak."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.5)
        yield listener


def no_connection(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except TimeoutError:
        return True
    return False


def planted(folder: Path, listener: socket.socket, spoil: Callable[[Path], None]) -> Path:
    """A valid connection file naming the trap, spoiled by `spoil` (chown or chmod)."""
    path = folder / "job.json"
    host, port = listener.getsockname()
    path.write_text(json.dumps({"addr": f"{host}:{port}", "token": "planted", "pid": os.getpid(), "what": "serve"}))
    path.chmod(0o600)
    spoil(path)
    return path


SPOILERS = {"another user's": lambda path: os.chown(path, NOBODY, NOBODY),
            "group-writable": lambda path: path.chmod(0o620),
            "world-writable": lambda path: path.chmod(0o602)}


def client_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MESHDBG_ADDR", "MESHDBG_TOKEN", "MESHDBG_CONNECTION_FILE")}
    return dict(env, **extra)


@pytest.mark.parametrize("spoil", SPOILERS, ids=list(SPOILERS))
def test_every_client_verb_refuses_a_planted_file_in_one_line_and_never_sends_the_token(
        tmp_path: Path, trap: socket.socket, spoil: str) -> None:
    path = planted(tmp_path, trap, SPOILERS[spoil])
    env = client_env(MESHDBG_CONNECTION_FILE=str(path), MESHDBG_TOKEN="my-secret")
    for verb in VERBS:
        if verb == ("servers",):
            continue  # lists the runtime folder, not the named file: see the folder test
        result = subprocess.run([sys.executable, "-m", "meshdbg", *verb], env=env, capture_output=True, text=True,
                                timeout=20, stdin=subprocess.DEVNULL)
        assert result.returncode == 2, (verb, result.stdout, result.stderr)
        assert result.stderr.startswith(f"meshdbg: refusing the connection file {path}: ") and \
            result.stderr.count("\n") == 1, (verb, result.stderr)
    assert no_connection(trap)


@pytest.mark.parametrize("spoil", SPOILERS, ids=list(SPOILERS))
def test_a_worker_refuses_a_planted_file_and_runs_on(tmp_path: Path, trap: socket.socket, spoil: str) -> None:
    path = planted(tmp_path, trap, SPOILERS[spoil])
    env = client_env(MESHDBG_CONNECTION_FILE=str(path), PYTHONBREAKPOINT="meshdbg.set_trace", MESHDBG_TOKEN="my-secret")
    result = subprocess.run([sys.executable, "-c", "breakpoint(); print('ran on')"], env=env, capture_output=True,
                            text=True, timeout=20, stdin=subprocess.DEVNULL, cwd=SCRIPTS)
    assert result.returncode == 0 and result.stdout == "ran on\n", result.stderr
    assert result.stderr.startswith(f"meshdbg: refusing the connection file {path}: "), result.stderr
    assert "Traceback" not in result.stderr
    assert no_connection(trap)


def test_serve_refuses_to_take_over_a_planted_file(tmp_path: Path, trap: socket.socket) -> None:
    path = planted(tmp_path, trap, SPOILERS["another user's"])
    result = subprocess.run([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], capture_output=True, text=True,
                            env=client_env(MESHDBG_CONNECTION_FILE=str(path)), timeout=20, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and "refusing the connection file" in result.stderr, result.stderr
    assert json.loads(path.read_text())["token"] == "planted"  # left as it was


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o1777])
def test_a_runtime_folder_others_can_write_is_refused(tmp_path: Path, trap: socket.socket, mode: int) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    planted(folder, trap, lambda path: path.rename(folder / "server-1-abc.json"))
    folder.chmod(mode)
    env = client_env(MESHDBG_RUNTIME_DIR=str(folder), MESHDBG_TOKEN="my-secret")
    for verb in (("list",), ("servers",)):
        result = subprocess.run([sys.executable, "-m", "meshdbg", *verb], env=env, capture_output=True, text=True,
                                timeout=20, stdin=subprocess.DEVNULL)
        assert result.returncode == 2, (verb, result.stderr)
        assert result.stderr == f"meshdbg: refusing the runtime folder {folder}: group or others can write it " \
                                f"(mode {mode:03o}); `chmod go-w` it\n"
    worker = subprocess.run([sys.executable, "-c", "breakpoint(); print('ran on')"], capture_output=True, text=True,
                            env=dict(env, PYTHONBREAKPOINT="meshdbg.set_trace"), timeout=20, stdin=subprocess.DEVNULL,
                            cwd=SCRIPTS)
    assert worker.stdout == "ran on\n" and "refusing the runtime folder" in worker.stderr, worker.stderr
    assert no_connection(trap)
