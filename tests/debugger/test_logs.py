"""The log files of `meshdbg serve`, `run` and `host` (meshdbg.wire.logs): real processes, their
files read afterwards as a person would after a crash."""

from __future__ import annotations

import os
import secrets
import signal
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from e2e import Server, start_server, wait_for
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.logs import LOGS_KEPT
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc


def log_of(runtime_dir: Path, verb: str, pid: int) -> Path:
    """The log file of process `pid`, once it exists."""
    return wait_for(lambda: next((runtime_dir / "logs").glob(f"{verb}-*-{pid}.log"), None), 20, f"{verb}'s log")


def logged(path: Path, text: str) -> str:
    """The first line of the log at `path` holding `text`, waited for."""
    return wait_for(lambda: next((line for line in path.read_text().splitlines() if text in line), ""), 20, repr(text))


def stopped(server: Server) -> None:
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=20) == 0


def test_a_refused_client_is_in_the_servers_private_log_with_the_reason(server: Server,
                                                                          private_runtime_dir: Path) -> None:
    path = log_of(private_runtime_dir, "serve", server.process.pid)
    refused = server.cli("list", env=dict(server.env, MESHDBG_TOKEN="not-the-token"))
    assert refused.returncode == 3 and refused.stderr.count("\n") == 1  # what the person sees is unchanged
    line = logged(path, "refused /meshdbg.v1.Debugger/Handshake")
    assert "WARNING" in line and "from ipv4:127.0.0.1:" in line and line.endswith(": wrong token")
    with grpc.insecure_channel(server.addr) as channel:
        with pytest.raises(grpc.RpcError):
            pb_grpc.DebuggerStub(channel).List(pb.ListRequest(), timeout=5)
        metadata = (("authorization", f"Bearer {server.env['MESHDBG_TOKEN']}"),)
        with pytest.raises(grpc.RpcError):
            pb_grpc.DebuggerStub(channel).Handshake(pb.HandshakeRequest(protocol_version=1), metadata=metadata, timeout=5)
    assert logged(path, "refused /meshdbg.v1.Debugger/List").endswith(": no token")
    assert "WARNING meshdbg.debugger.servicer: refused a control client from ipv4:127.0.0.1:" in logged(path, "version 1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert "Bearer" not in path.read_text() and "not-the-token" not in path.read_text()


def test_who_stopped_and_how_the_server_ended_are_logged(server: Server, private_runtime_dir: Path) -> None:
    path = log_of(private_runtime_dir, "serve", server.process.pid)
    worker = server.worker("hold.py", 3, "hosts=1,gpus=1")
    server.wait_sessions(1)
    opened = logged(path, "session 1: ")
    assert f"rank 3 (hosts=1,gpus=1) pid {worker.pid} thread 'MainThread'" in opened and "from ipv4:127.0.0.1:" in opened
    worker.kill()
    assert logged(path, "session 1 (rank 3").endswith(f"ended: the worker went away (rank 3 (pid {worker.pid}) "
                                                      "exited or was killed)")
    stopped(server)
    assert path.read_text().splitlines()[-1].endswith("INFO meshdbg.wire.logs: meshdbg serve ends: exit status 0")


def test_debug_writes_more_than_the_default_and_the_option_beats_the_variable(
        tmp_path: Path, private_runtime_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {}
    for name, options, level in (("default", (), ""), ("debug", ("--log-level", "debug"), ""),
                                 ("variable", (), "debug"), ("option", ("--log-level", "warning"), "debug")):
        monkeypatch.setenv("MESHDBG_LOG", level)  # start_server passes its environment on (empty: unset)
        (tmp_path / name).mkdir()
        server = start_server(tmp_path / name, options=options)
        try:
            path = log_of(private_runtime_dir, "serve", server.process.pid)
            for _ in range(3):
                assert server.cli("list").returncode == 0
        finally:
            server.close()
        counts[name] = path.read_text().count("\n")
    assert counts["debug"] >= counts["default"] + 3 * 3  # each list: a handshake, its call and the list call
    assert counts["variable"] == counts["debug"] and counts["option"] == 0


@pytest.mark.parametrize("verb", [["serve"], ["run", "--mesh", "gpus=1", "x.py"], ["host", "--join", "meshdbg://127.0.0.1:1"]])
def test_a_bad_log_level_is_one_line(verb: list[str], tmp_path: Path, private_runtime_dir: Path) -> None:
    (tmp_path / "x.py").write_text("")
    env = dict(os.environ, MESHDBG_LOG="loud", MESHDBG_TOKEN="t")
    done = subprocess.run([sys.executable, "-m", "meshdbg", *verb], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "meshdbg: MESHDBG_LOG='loud': expected debug / info / warning / error\n"
    assert not (private_runtime_dir / "logs").exists() or not any((private_runtime_dir / "logs").iterdir())


def test_a_run_and_its_host_agent_log_forks_exits_and_the_first_failure(tmp_path: Path,
                                                                        private_runtime_dir: Path) -> None:
    (tmp_path / "fails.py").write_text("import os, sys\nsys.exit(int(os.environ['RANK']) * 3)\n")
    env = dict(os.environ, MESHDBG_TOKEN=secrets.token_urlsafe(16), PYTHONUNBUFFERED="1")
    env.pop("MESHDBG_ADDR", None)
    with open(tmp_path / "run.err", "w") as err:
        run = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--on", "join", "--wait-hosts", "30", "--mesh",
                                "hosts=1,gpus=2", "--keep-going", "fails.py"], env=env, cwd=tmp_path,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        url = wait_for(lambda: next((w for w in (tmp_path / "run.err").read_text().split() if w.startswith("meshdbg://")),
                                    ""), 20, "the join line")
        agent = subprocess.run([sys.executable, "-m", "meshdbg", "host", "--join", url], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert agent.returncode == 0, agent.stderr
        assert run.wait(timeout=30) == 3
    finally:
        run.kill()
        run.wait(timeout=10)
    run_log = log_of(private_runtime_dir, "run", run.pid).read_text()
    host_log = next((private_runtime_dir / "logs").glob("host-*.log")).read_text()
    assert "said: meshdbg: waiting 30 s for 1 host(s)" in run_log and "said: meshdbg: host " in run_log
    for rank in (0, 1):
        assert f"rank {rank} forked: pid" in host_log and f"joined: rank {rank} (hosts=0,gpus={rank}) pid" in run_log
    assert "INFO meshdbg.host.agent: rank 0 (pid" in host_log and "WARNING meshdbg.host.agent: rank 1 (pid" in host_log
    assert "rank 1 (hosts=0,gpus=1) exited (status 3)" in run_log
    assert "WARNING meshdbg.debugger.mesh.launcher: rank 1 failed first (exit status 3)\n" in run_log
    assert run_log.rstrip().endswith("meshdbg run ends: exit status 3")
    assert host_log.rstrip().endswith("meshdbg host ends: exit status 0") and "joining the run at 127.0.0.1:" in host_log


def test_a_server_whose_log_cannot_be_created_says_so_once_and_serves(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("")
    env = dict(os.environ, MESHDBG_RUNTIME_DIR=str(tmp_path / "not-a-folder"), MESHDBG_CONNECTION_FILE=str(tmp_path / "c.json"))
    server = subprocess.Popen([sys.executable, "-m", "meshdbg", "serve"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("127.0.0.1:")
        listed = subprocess.run([sys.executable, "-m", "meshdbg", "list"], env=env, capture_output=True, text=True,
                                timeout=30)
        assert (listed.returncode, listed.stdout) == (0, "no sessions\n"), listed.stderr
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=20)
    assert server.returncode == 0 and "Traceback" not in err
    assert err.splitlines()[0].startswith("meshdbg: running without a log file ([Errno 20] Not a directory")


def test_only_the_newest_logs_of_a_verb_are_kept(server: Server, private_runtime_dir: Path, tmp_path: Path) -> None:
    logs = log_of(private_runtime_dir, "serve", server.process.pid).parent
    old = [logs / f"serve-20200101T0000{second:02d}Z-1.log" for second in range(LOGS_KEPT)]
    for path in old:
        path.write_text("old\n")
    (logs / "run-20200101T000000Z-1.log").write_text("another verb's\n")
    (tmp_path / "newest").mkdir()
    newest = start_server(tmp_path / "newest")
    try:
        log_of(private_runtime_dir, "serve", newest.process.pid)
    finally:
        newest.close()
    assert sorted(logs.glob("serve-*.log")) == sorted([*old[2:], *logs.glob(f"serve-*-{server.process.pid}.log"),
                                                       *logs.glob(f"serve-*-{newest.process.pid}.log")])
    assert (logs / "run-20200101T000000Z-1.log").exists()
