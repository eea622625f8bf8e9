"""One connection file per server, private, removed only by its owner; clients pick the server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from meshdbg.wire.connection import ConnectionInfo, live_servers, private_file, write_connection_file
from pty_child import PtyChild


def serve(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    addr = process.stdout.readline().strip()
    assert addr, process.stderr.read()
    return process, addr


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "meshdbg", *args], env=env, capture_output=True, text=True, timeout=20)


@pytest.fixture
def env(private_runtime_dir: Path) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("MESHDBG_ADDR", "MESHDBG_TOKEN", "MESHDBG_CONNECTION_FILE")}


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.communicate(timeout=10)


def test_each_server_writes_its_own_private_file_and_removes_only_it(env: dict[str, str], private_runtime_dir: Path
                                                                     ) -> None:
    first, first_addr = serve(env)
    try:
        assert cli(env, "list").returncode == 0  # the only live server: found without being named
        second, second_addr = serve(env)
        try:
            files = sorted(private_runtime_dir.glob("server-*.json"))
            assert len(files) == 2
            assert stat.S_IMODE(private_runtime_dir.stat().st_mode) == 0o700
            assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
            assert {json.loads(f.read_text())["addr"] for f in files} == {first_addr, second_addr}
            ambiguous = cli(env, "list")
            assert ambiguous.returncode == 2 and "Traceback" not in ambiguous.stderr
            assert first_addr in ambiguous.stderr and second_addr in ambiguous.stderr and "--addr" in ambiguous.stderr
            assert cli(env, "list", "--addr", second_addr).returncode == 0  # token from its file
            assert cli(dict(env, MESHDBG_ADDR=first_addr), "list").returncode == 0
            listed = cli(env, "servers")
            assert listed.returncode == 0 and first_addr in listed.stdout and second_addr in listed.stdout
            assert [s["addr"] for s in json.loads(cli(env, "servers", "--json").stdout)] == [first_addr, second_addr]
        finally:
            stop(second)
        assert [s.info.addr for s in live_servers()] == [first_addr]  # the second removed its own file only
        assert cli(env, "list").returncode == 0
    finally:
        stop(first)
    assert [path.name for path in private_runtime_dir.glob("*")] == ["logs"]  # the servers' logs stay (wire/logs.py)
    none = cli(env, "list")
    assert none.returncode == 3 and "no meshdbg server found" in none.stderr


def test_a_dead_servers_file_is_ignored(env: dict[str, str], private_runtime_dir: Path) -> None:
    process, addr = serve(env)
    process.kill()  # no chance to remove its file
    process.communicate(timeout=10)
    assert list(private_runtime_dir.glob("server-*.json"))
    assert live_servers() == []
    assert cli(env, "list").returncode == 3


def test_a_named_connection_file_is_written_exactly_and_not_taken_from_a_live_server(
        env: dict[str, str], tmp_path: Path, private_runtime_dir: Path) -> None:
    named = tmp_path / "job" / "conn.json"
    pinned = dict(env, MESHDBG_CONNECTION_FILE=str(named))
    process, addr = serve(pinned)
    try:
        assert json.loads(named.read_text())["addr"] == addr and stat.S_IMODE(named.stat().st_mode) == 0o600
        assert stat.S_IMODE(named.parent.stat().st_mode) == 0o700
        assert not list(private_runtime_dir.glob("server-*.json"))  # exactly that file, nothing else
        second = subprocess.run([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=pinned,
                                capture_output=True, text=True, timeout=20)
        assert second.returncode == 2 and "belongs to the live server" in second.stderr
        assert json.loads(named.read_text())["addr"] == addr  # still the first server's
        assert cli(pinned, "list").returncode == 0
    finally:
        stop(process)
    assert not named.exists()


def test_a_stale_named_file_is_replaced_atomically_and_a_loose_one_never_leaks(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    named = tmp_path / "conn.json"
    named.write_text(json.dumps({"addr": "127.0.0.1:1", "token": "old", "pid": 2 ** 22 + 7}))  # nobody's pid
    named.chmod(0o644)
    monkeypatch.setenv("MESHDBG_CONNECTION_FILE", str(named))
    path = write_connection_file(ConnectionInfo("127.0.0.1:2", "secret"))
    assert path == named and stat.S_IMODE(named.stat().st_mode) == 0o600
    assert json.loads(named.read_text())["token"] == "secret"
    assert [p.name for p in tmp_path.iterdir()] == ["conn.json"]  # no temp file left behind


def test_private_file_tightens_a_loose_history(tmp_path: Path) -> None:
    fresh = private_file(tmp_path / "history")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    loose = tmp_path / "old-history"
    loose.write_text("p password\n")
    loose.chmod(0o644)
    assert stat.S_IMODE(private_file(loose).stat().st_mode) == 0o600
    assert loose.read_text() == "p password\n"


def test_a_run_beside_a_serve_leaves_the_serves_file_alone(env: dict[str, str], tmp_path: Path,
                                                           private_runtime_dir: Path) -> None:
    process, serve_addr = serve(env)
    try:
        script = tmp_path / "quick.py"
        script.write_text("print('ran')\n")
        run = cli(env, "run", "--mesh", "procs=2", str(script))
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
        assert [s.info.addr for s in live_servers()] == [serve_addr]  # run removed its own file only
        assert cli(env, "list").returncode == 0  # and clients still find the serve
    finally:
        stop(process)


def test_at_a_terminal_a_client_verb_asks_which_server(env: dict[str, str], tmp_path: Path) -> None:
    """Two live servers: a person is asked (on stderr, so `> out.json` gets only the JSON);
    a typo asks again; Ctrl-D is a one-line refusal."""
    first, first_addr = serve(env)
    second, second_addr = serve(env)
    try:
        out = tmp_path / "out.json"
        child = PtyChild(["bash", "--norc", "-c", f"exec {sys.executable} -m meshdbg list --json > {out}"], env=env,
                         timeout=20)
        child.expect(f"1\\) {first_addr}")
        child.expect(f"2\\) {second_addr}")
        child.expect(r"which server\? \[1-2\]")
        child.sendline("3")
        child.expect("type a number from 1 to 2")
        child.sendline("2")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and json.loads(out.read_text()) == []
        child = PtyChild([sys.executable, "-m", "meshdbg", "stacks"], env=env, timeout=20)
        child.expect(r"which server\?")
        child.sendeof()
        child.expect("meshdbg: no server chosen")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 2 and "Traceback" not in child.before
    finally:
        stop(second)
        stop(first)
