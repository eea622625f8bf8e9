"""Fixtures shared by every test folder; the helpers behind them live in e2e.py."""

from __future__ import annotations

import os

# The test process forks (subprocess) after earlier tests used gRPC in it. gRPC's fork handlers
# then run in the forked child before it execs and can kill it ("epoll_wait error: Bad file
# descriptor"). This process needs none of them: gRPC reads the switch once, at import, so
# it is off here and the variable is gone again before any worker or server inherits it.
os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "false"
import grpc  # noqa: E402,F401

del os.environ["GRPC_ENABLE_FORK_SUPPORT"]

import signal

# A suite started in the background by a non-interactive shell inherits SIGINT ignored (POSIX),
# and so would every worker and local pdb it starts, which keep an ignored signal across exec:
# the Ctrl-C the tests play as a person at a terminal could not reach them. As from a terminal,
# SIGINT gets Python's own handler here, which the processes started reset to the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import sys
from pathlib import Path
from typing import Iterator

import pytest

try:
    from hypothesis import settings
except ImportError:  # (the pdb-parity venvs of .ci/run have no property tests, and no hypothesis)
    pass
else:
    # Property tests check what comes out, not how fast: on 2 cores running the whole suite a case
    # of test_render's CSV round trip took 264 ms, past hypothesis's default 200 ms deadline.
    settings.register_profile("suite", deadline=None)
    settings.load_profile("suite")

from e2e import Server, serving


@pytest.fixture(autouse=True)
def private_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's servers publish their connection files in a folder of its own, so tests
    (and other users' servers on this machine) never see each other's."""
    folder = tmp_path / "runtime"
    monkeypatch.setenv("MESHDBG_RUNTIME_DIR", str(folder))
    return folder


CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Remember whether a test's body failed, for fixtures that report more when it did."""
    report = yield
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed
    return report


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    """A real `meshdbg serve` for the test; when the test fails, what its server and workers
    wrote that the test did not read is printed with the report (a flake seen once in CI
    is then explained by that run, not guessed at)."""
    def report(left: str) -> None:
        if left and request.node.stash.get(CALL_FAILED, False):
            sys.stderr.write(left)

    with serving(tmp_path, on_close=report) as srv:
        yield srv


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the tests whose ranks import torch (3 s of CPU a process here) go
    to one worker, one at a time, so that two of them never load the machine at once."""
    for item in items:
        if item.get_closest_marker("torch"):
            item.add_marker(pytest.mark.xdist_group("torch"))
