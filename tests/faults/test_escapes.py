"""Escape sequences a rank plants in its frames and names never reach a terminal raw.

tests/scripts/evil_filename.py stops in code compiled under a filename holding an OSC title
sequence, a screen clear and a bidi override, in a function and a thread named with them too.
Every output path that shows identity or frame text (`list`, `list --all`, `watch`, `stacks`,
cast headers, serve's and run's stderr) must show the escapes as text (`\\x1b`), never the bytes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from e2e import SCRIPTS, start_server, stop_process, wait_for

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # all but \t and \n
SHOWN = "\\x1b]0;evil\\x07\\x1b[2J\\u202e"


def assert_escaped(text: str, what: str) -> None:
    assert not RAW.search(text), (what, text)
    assert SHOWN in text, (what, text)


def test_list_watch_stacks_cast_and_serves_stderr_show_escapes_as_text(tmp_path: Path) -> None:
    server = start_server(tmp_path)
    try:
        server.worker("evil_filename.py", 0)
        server.wait_sessions(1)
        watch = subprocess.Popen([sys.executable, "-m", "meshdbg", "watch"], env=server.env, stdout=subprocess.PIPE,
                                 text=True)
        try:
            assert_escaped(watch.stdout.readline(), "watch")
        finally:
            watch.kill()
            watch.communicate(timeout=10)
        for verb in (("list",), ("stacks",), ("stacks", "--threads", "all")):
            result = server.cli(*verb)
            assert result.returncode == 0, result.stderr
            assert_escaped(result.stdout, verb)
        cast = server.cli("cast", "all", "p 1").stdout  # the stop's beginning (--Return--) is pdb's text
        assert cast.startswith("rank 0:\n") and cast.endswith("\n  1\n"), cast
        assert not RAW.search(server.cli("list", "--json").stdout)
    finally:
        for worker in server.workers:
            stop_process(worker)
        server.process.terminate()
        _, stderr = server.process.communicate(timeout=10)
    assert_escaped(stderr, "serve's stderr")


def test_runs_announcements_and_list_all_show_escapes_as_text(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("MESHDBG_ADDR", "MESHDBG_TOKEN")}
    env.update(MESHDBG_CONNECTION_FILE=str(tmp_path / "conn.json"), MESHDBG_NAME="x")
    run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--mesh", "procs=1", "--name", "w\x1b[31m",
                            "evil_filename.py"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, cwd=SCRIPTS)
    try:
        def stopped() -> str:
            result = subprocess.run([sys.executable, "-m", "meshdbg", "list", "--all"], env=env, capture_output=True,
                                    text=True, timeout=20)
            return result.stdout if "stopped" in result.stdout else ""

        listing = wait_for(stopped, 20, "the rank to stop")
        assert_escaped(listing, "list --all")
        assert "w\\x1b[31m" in listing
        subprocess.run([sys.executable, "-m", "meshdbg", "continue"], env=env, capture_output=True, timeout=20)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=10)
    announcement = next(line for line in stderr.splitlines() if "stopped at" in line)
    assert_escaped(announcement, "run's announcement")
    assert not RAW.search(stderr), stderr
