"""The worker's agent stream: registered with the DebugClient for the whole life of the process.

Opened when the worker starts (meshdbg.worker.mesh.bootstrap), it lets `meshdbg list --all` show the
rank as running, stopped or exited, brings actor calls to the worker (queued on `calls` for
the main thread) and lets the server stop the worker in pdb: an interrupt makes the reader
thread send INTERRUPT_SIGNAL to the main thread, whose handler opens a remote pdb session in
the frame it interrupted. The reader thread also answers stack samples itself (it runs while the
main thread is busy, blocked or stopped in pdb; only a thread holding the GIL stops it, and then
the server samples from outside) and sets the process groups' timeouts while a rank is paused
(meshdbg.worker.collectives). Synchronous gRPC on a daemon thread, like the session streams.
"""

from __future__ import annotations

import ctypes
import queue
import signal
import socket
import sys
import threading
from types import FrameType
from typing import Callable

import grpc

from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.wire.proto import mesh_pb2_grpc as mesh_grpc
from meshdbg.wire.vocabulary import StopReason
from meshdbg.worker import collectives
from meshdbg.worker.hook import stop_at
from meshdbg.worker.identity import WorkerIdentity, session_identity
from meshdbg.worker.pipelining.progress import TRACKER
from meshdbg.worker.remote import open_stream, reopen
from meshdbg.worker.stacks import OWN_THREAD_PREFIX, answer_sample

INTERRUPT_SIGNAL = signal.SIGUSR2
CLOSE_TIMEOUT_S = 2.0
PR_SET_PTRACER = 0x59616D61  # Yama: let this pid and its descendants ptrace us


def allow_sampling_by(welcome: mesh_pb.AgentWelcome) -> None:
    """Let the server on this host (and the py-spy it runs) read this process's memory, as
    Yama's ptrace_scope 1 otherwise forbids to a process that is not an ancestor. Does nothing
    elsewhere (another host, no Yama, not Linux)."""
    if sys.platform.startswith("linux") and welcome.server_pid and welcome.server_host == socket.gethostname():
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PTRACER, welcome.server_pid, 0, 0, 0)


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if frame is not None:
        stop_at(frame, StopReason.INTERRUPT)


def install_interrupt_handler() -> None:
    """Let an agent interrupt stop the main thread in pdb; call from the main thread."""
    signal.signal(INTERRUPT_SIGNAL, _on_interrupt)


class Agent:
    """One worker's agent stream; `calls` yields actor spawns/calls, then None when it ends.

    A stream that breaks (a hung server, one restarted on the same connection file) is opened
    again for up to the reconnect window (meshdbg.wire.keepalive), so the rank stays known; a
    stream the server ends (it stops on purpose) is over at once.
    """

    opened = False  # whether this process has opened one (meshdbg.worker.autostart opens no second)

    def __init__(self, connect: Callable[[], ConnectionInfo], identity: WorkerIdentity) -> None:
        """Open the stream and wait for the welcome; raises ConnectionFailed when unreachable."""
        self.calls: queue.SimpleQueue[mesh_pb.AgentCommand | None] = queue.SimpleQueue()
        self._connect = connect
        self._hello = mesh_pb.AgentHello(identity=session_identity(identity, None), launcher=identity.launcher)
        self._open(connect())
        Agent.opened = True
        main = threading.main_thread().ident
        assert main is not None  # it runs
        self._main_thread = main
        self._reader = threading.Thread(target=self._read, name=OWN_THREAD_PREFIX + "agent-reader", daemon=True)
        self._reader.start()

    def _open(self, connection: ConnectionInfo, window_s: float | None = None) -> None:
        self._outgoing, self._responses, first = open_stream(
            connection, lambda channel: mesh_grpc.MeshStub(channel).Agent, mesh_pb.AgentMessage(hello=self._hello),
            window_s)
        allow_sampling_by(first.welcome)

    def _read(self) -> None:
        while True:
            try:
                for command in self._responses:
                    self._dispatch(command)
                break  # the server ended the stream: it stops on purpose
            except grpc.RpcError:  # it went away: try again, else the worker runs on without it
                if not reopen(self._outgoing, lambda window_s: self._open(self._connect(), window_s)):
                    break
        self.calls.put(None)

    def _dispatch(self, command: mesh_pb.AgentCommand) -> None:
        kind = command.WhichOneof("kind")
        if command.HasField("interrupt"):
            signal.pthread_kill(self._main_thread, INTERRUPT_SIGNAL)
        elif kind == "sample":
            self._outgoing.put(mesh_pb.AgentMessage(stacks=answer_sample(command.sample)))
        elif kind == "pipeline":
            self._outgoing.put(mesh_pb.AgentMessage(pipeline=TRACKER.report(command.pipeline)))
        elif kind == "collectives_timeout":
            collectives.apply(command.collectives_timeout.timeout_s)
        else:
            self.calls.put(command)

    def send_result(self, result: mesh_pb.ActorResult) -> None:
        self._outgoing.put(mesh_pb.AgentMessage(result=result))

    def close(self, exit_code: int) -> None:
        """Tell the server how this worker ends, then close the stream (bounded wait)."""
        self._outgoing.put(mesh_pb.AgentMessage(exit=mesh_pb.AgentExit(exit_code=exit_code)))
        self._outgoing.put(None)
        self._reader.join(CLOSE_TIMEOUT_S)
