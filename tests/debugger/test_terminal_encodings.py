"""What ranks print reaches a terminal whose encoding cannot hold it (PYTHONIOENCODING=ascii,
a Latin-1 locale) escaped, never as a traceback of the CLI (meshdbg.debugger.cli.any_text_writable).
`p 'héllo'` was a UnicodeEncodeError of `cast` and `attach --plain`, and under `meshdbg run` a
rank's log line of it broke the run's output: both ranks crashed, and the mesh stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import Server

ESCAPED = "'h\\xe9llo \\u2713 \\u65e5\\u672c'"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_cast_and_attach_show_a_value_the_terminal_cannot_hold_escaped(server: Server, encoding: str) -> None:
    server.worker("utf8_word.py", 0)
    server.wait_sessions(1)
    cast = _cli(server, encoding, "cast", "0", "p word")
    attached = _cli(server, encoding, "attach", "--plain", "0", input="p word\n")
    assert cast.returncode == 0 and cast.stderr == "", cast.stderr
    expected = "'h\xe9llo \\u2713 \\u65e5\\u672c'" if encoding == "latin-1" else ESCAPED
    assert cast.stdout == f"rank 0:\n  {expected}\n"
    assert attached.returncode == 0 and "Traceback" not in attached.stderr, attached.stderr
    assert f"(Pdb) {expected}\n" in attached.stdout, attached.stdout


def _cli(server: Server, encoding: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """`meshdbg ARGS` with its stdout and stderr in `encoding`, read so (strictly: nothing else)."""
    return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=dict(server.env, PYTHONIOENCODING=encoding),
                          input=input, capture_output=True, text=True, encoding=encoding, errors="strict", timeout=20)


def test_a_run_whose_ranks_print_what_its_terminal_cannot_hold_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("import sys\nsys.stdout.buffer.write('h\\u00e9llo \\u2713\\n'.encode())\nsys.stdout.flush()\n"
                      "print('second line', flush=True)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MESHDBG_")}
    done = subprocess.run([sys.executable, "-m", "meshdbg", "run", "--mesh", "gpus=2", str(script)], cwd=tmp_path,
                          env=dict(env, PYTHONIOENCODING="ascii"), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, encoding="ascii", errors="strict", timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "crashed" not in done.stderr, done.stderr
    for rank in (0, 1):
        assert f"[r{rank} gpus={rank}] h\\xe9llo \\u2713\n" in done.stdout, done.stdout
        assert f"[r{rank} gpus={rank}] second line\n" in done.stdout, done.stdout
