"""The worker's channel to the server (meshdbg.worker.remote): a stop on a channel that is
connected already asks gRPC's core, and starts no thread (issue 22: a connectivity
subscription started gRPC's polling thread at every stop of every rank); a channel whose
server died is not taken for connected."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent import futures
from typing import Callable, Iterator

import grpc
import pytest

from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.errors import ConnectionFailed
from meshdbg.worker.remote import channel_for, connected_now, ready_channel

DEADLINE_S = 10.0


@pytest.fixture
def connection() -> Iterator[ConnectionInfo]:
    """A real gRPC server to connect to (the channel is all that is tested: no call is made)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield ConnectionInfo(f"127.0.0.1:{port}", "token")
    server.stop(None)


@pytest.fixture
def server_process() -> Iterator[tuple[subprocess.Popen, ConnectionInfo]]:
    """A gRPC server in a process of its own, which a test may kill (its port goes with it at once).
    It listens on a loopback address of this test process's own (all of 127/8 is loopback), not
    127.0.0.1: once it is killed, no other test's server, which binds 127.0.0.1 port 0, can be
    given its port and answer a channel that reconnects there (CI saw one answer there twice)."""
    process = subprocess.Popen([sys.executable, "-c", SERVE, OWN_LOOPBACK], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    port = process.stdout.readline().strip()
    yield process, ConnectionInfo(f"{OWN_LOOPBACK}:{port}", "token")
    process.kill()
    process.wait()


OWN_LOOPBACK = f"127.77.{os.getpid() // 254 % 256}.{os.getpid() % 254 + 1}"

SERVE = """
import grpc, sys, threading
from concurrent import futures
server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
print(server.add_insecure_port(sys.argv[1] + ":0"), flush=True)
server.start()
threading.Event().wait()
"""


def _within_deadline(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_connected_channel_is_ready_at_once_and_starts_no_thread(connection: ConnectionInfo) -> None:
    before = threading.active_count()
    assert not connected_now(channel_for(connection))  # never used yet: idle
    channel = ready_channel(connection, time.monotonic() + DEADLINE_S)  # connects, through a subscription
    assert connected_now(channel)
    # gRPC's polling thread of that subscription ends up to 0.2 s after it
    assert _within_deadline(lambda: threading.active_count() <= before)
    assert ready_channel(connection, time.monotonic() + DEADLINE_S) is channel
    assert threading.active_count() <= before  # (an earlier test's thread may end meanwhile: CI saw 5 == 6)


def test_a_channel_whose_server_died_is_not_taken_for_connected(
        server_process: tuple[subprocess.Popen, ConnectionInfo]) -> None:
    process, connection = server_process
    before = threading.active_count()
    channel = ready_channel(connection, time.monotonic() + DEADLINE_S)
    # A later stop: the subscription's polling thread has ended (within 0.2 s), and gRPC's
    # state it kept with it (a subscription while it runs is told that state first)
    assert _within_deadline(lambda: threading.active_count() <= before)
    process.kill()
    process.wait()
    assert _within_deadline(lambda: not connected_now(channel))
    with pytest.raises(ConnectionFailed):
        ready_channel(connection, time.monotonic() + DEADLINE_S)


def test_a_stopped_server_is_waited_for_not_taken_for_gone(server_process: tuple[subprocess.Popen, ConnectionInfo]
                                                          ) -> None:
    """A server stopped for seconds (SIGSTOP, a starved machine) fails gRPC's connection, but
    its port still accepts: a stop reached meanwhile waits for it (it was told "connection
    failed" after REFUSED_GRACE_S, and the rank ran on past its breakpoint()). A connection
    that was up when the server stopped is READY until keepalive breaks it: then this."""
    process, connection = server_process
    process.send_signal(signal.SIGSTOP)
    outcome: list[object] = []
    waiting = threading.Thread(target=lambda: outcome.append(_ready_or_error(connection)))
    try:
        waiting.start()
        waiting.join(STALL_S)  # the fault: the server stays stopped this long, past keepalive's ~4 s
        assert not outcome, outcome  # still waiting for it, not given up
    finally:
        process.send_signal(signal.SIGCONT)
    waiting.join(DEADLINE_S)
    assert outcome == [channel_for(connection)]


STALL_S = 6.0


def _ready_or_error(connection: ConnectionInfo) -> object:
    try:
        channel = ready_channel(connection, time.monotonic() + STALL_S + DEADLINE_S)
    except ConnectionFailed as exc:
        return exc
    return channel


def test_a_listener_that_is_no_meshdbg_server_is_not_waited_for() -> None:
    """Another service at the address (or TLS against plaintext) accepts connections too, but
    answers: a stop gives up after the grace, as for a refused connection, and does not wait
    the whole reconnect window as for a stopped server."""
    listener = socket.create_server(("127.0.0.1", 0))
    served = threading.Event()

    def answer_and_close() -> None:
        while not served.is_set():
            try:
                peer, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            with peer:
                peer.recv(64)
                peer.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=answer_and_close, daemon=True).start()
    connection = ConnectionInfo(f"127.0.0.1:{listener.getsockname()[1]}", "token")
    try:
        with pytest.raises(ConnectionFailed, match=r"\(connection failed\)"):  # not "(no answer)", at the deadline
            ready_channel(connection, time.monotonic() + 60)
    finally:
        served.set()
        listener.close()


HOLDING_WRAPPER = """\
import runpy, sys
from meshdbg.worker import remote

plain = remote.RemoteSession.send_then_receive


def counted(session, message):  # as a profiler of the user's might wrap it
    return plain(session, message)


remote.RemoteSession.send_then_receive = counted
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_process_whose_stop_found_no_server_exits_whatever_its_modules_hold(tmp_path) -> None:
    """The channel of a stop that just failed to connect is never freed by the interpreter's
    end: freed there, gRPC's close waited for its connectivity watch, which only gRPC's
    daemon threads (frozen by then) end, and the process hung at its exit for good (seen with
    a wrapper whose `__main__` holds meshdbg's worker module, as a profiler's may)."""
    (tmp_path / "wrapper.py").write_text(HOLDING_WRAPPER)
    (tmp_path / "job.py").write_text("x = 1\nbreakpoint()\nprint('job done', flush=True)\n")
    with socket.socket() as taken:  # a port that refuses: bound, never listening
        taken.bind(("127.0.0.1", 0))
        env = dict(os.environ, MESHDBG_ADDR=f"127.0.0.1:{taken.getsockname()[1]}", MESHDBG_TOKEN="token",
                   MESHDBG_RECONNECT_S="1", PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
        done = subprocess.run([sys.executable, "wrapper.py", "job.py"], cwd=tmp_path, env=env, text=True,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert done.returncode == 0 and "job done" in done.stdout, done.stderr
    assert "no meshdbg server reachable" in done.stderr, done.stderr
