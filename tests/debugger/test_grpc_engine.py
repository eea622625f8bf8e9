"""The `meshdbg` command loads gRPC on its classic pollers (meshdbg.debugger.grpc_engine);
not when the user set the variable (the programs `meshdbg run` starts: mesh/test_rank_environment.py).

Which engine a process runs is read from gRPC's own trace of its sockets (GRPC_TRACE=tcp):
the classic pollers log from `tcp_posix.cc`, the EventEngine from its own `endpoint.cc`.
"""

from __future__ import annotations

import socket

import grpc
import pytest

from e2e import Server
from meshdbg.debugger import grpc_engine

CLASSIC, EVENT_ENGINE = " tcp_posix.cc:", " endpoint.cc:"  # the source file of a trace line, after the thread id
TRACED = {"GRPC_VERBOSITY": "debug", "GRPC_TRACE": "tcp"}


def engine_of(trace: str) -> str:
    """Which engine gRPC's tcp trace `trace` came from."""
    seen = {name for name, mark in (("classic", CLASSIC), ("event engine", EVENT_ENGINE)) if mark in trace}
    assert len(seen) == 1, trace[-2000:]
    return seen.pop()


def test_the_installed_grpc_version_is_read_without_loading_grpc() -> None:
    assert grpc_engine.installed_grpc_version() == grpc.__version__


def test_the_classic_pollers_are_chosen_only_on_a_measured_grpc_and_never_over_the_users_choice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(grpc_engine.VARIABLE, raising=False)
    monkeypatch.setattr(grpc_engine, "installed_grpc_version", lambda: "1.85.3")
    assert grpc_engine.classic_pollers() == grpc_engine.CLASSIC_POLLERS
    for unmeasured in ("1.86.0", "1.8.5", None):
        monkeypatch.setattr(grpc_engine, "installed_grpc_version", lambda: unmeasured)
        assert grpc_engine.classic_pollers() is None
    monkeypatch.setattr(grpc_engine, "installed_grpc_version", lambda: "1.85.3")
    monkeypatch.setenv(grpc_engine.VARIABLE, "")  # set, even empty: the user's choice
    assert grpc_engine.classic_pollers() is None


@pytest.mark.parametrize("users_variable", [None, ""])
def test_the_command_runs_the_classic_pollers_unless_the_user_set_the_variable(
        server: Server, users_variable: str | None) -> None:
    env = {**server.env, **TRACED}
    env.pop(grpc_engine.VARIABLE, None)
    if users_variable is not None:
        env[grpc_engine.VARIABLE] = users_variable
    done = server.cli("list", "--json", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    classic = users_variable is None and grpc_engine.classic_pollers() is not None
    assert engine_of(done.stderr) == ("classic" if classic else "event engine")
    assert "Unknown experiment" not in done.stderr



@pytest.mark.parametrize("users_verbosity", [None, "ERROR"])
def test_the_command_keeps_grpcs_log_lines_out_unless_the_user_asks(server: Server, users_verbosity: str | None
                                                                    ) -> None:
    """A port already taken: one line of ours; gRPC's own `add_port.cc` line only with
    GRPC_VERBOSITY set (which the command's ranks never inherit: mesh/test_rank_environment.py)."""
    env = dict(server.env)
    env.pop(grpc_engine.VERBOSITY, None)
    if users_verbosity is not None:
        env[grpc_engine.VERBOSITY] = users_verbosity
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = server.cli("serve", "--port", str(taken.getsockname()[1]), env=env)
    assert done.returncode == 2
    assert done.stderr.count("meshdbg: cannot listen on 127.0.0.1:") == 1, done.stderr
    assert ("add_port.cc" in done.stderr) == (users_verbosity is not None), done.stderr
