"""One pdb session's bidirectional stream to the DebugClient, from the worker's side.

Synchronous gRPC on purpose: the pdb thread blocks on `receive()` exactly as local pdb blocks
on stdin, while the worker's other threads keep running. One channel per server address is
shared by all sessions of the process.
"""

from __future__ import annotations

import os
import queue
import random
import threading
import time
from typing import Callable, Iterator

import grpc
from google.protobuf.message import Message

from meshdbg.wire.chunks import chunks, tail_start
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.keepalive import CLIENT_KEEPALIVE
from meshdbg.wire.tls import channel_credentials
from meshdbg.wire.errors import ConnectionFailed
from meshdbg.wire.status import error_from_rpc
from meshdbg.wire.vocabulary import EndReason
from meshdbg.worker.forking import ForkGuard
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc

CONNECT_TIMEOUT_S = 5.0
END_TIMEOUT_S = 5.0  # how long an ending session waits for the server to close its stream
BUSY_RETRY_S = 60.0  # how long a worker keeps asking a server too busy to take its stream
BUSY_PAUSE_S = 0.05  # the first pause between asks; it doubles up to BUSY_PAUSE_MAX_S
BUSY_PAUSE_MAX_S = 2.0
# What a live but overloaded server answers a new stream with (too many streams at once).
_BUSY = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE)
OUTGOING_LIMIT = 8  # output chunks queued for sending before pdb's writes wait for the wire
_WAIT_S = 0.001
CHANNEL_OPTIONS = CLIENT_KEEPALIVE  # a hung server is noticed in ~4 s and the worker runs on

_channels: dict[str, grpc.Channel] = {}
_channels_lock = threading.Lock()
_fork_guard = ForkGuard(lambda: list(_channels.values()))
_fork_guard.install()


def channel_for(connection: ConnectionInfo) -> grpc.Channel:
    """The process's channel to the server, created on first use (over TLS when pinned)."""
    addr = connection.addr
    with _channels_lock:
        channel = _channels.get(addr)
        if channel is None:
            credentials = channel_credentials(addr, connection.fingerprint)
            channel = _channels[addr] = (grpc.secure_channel(addr, credentials, options=CHANNEL_OPTIONS) if credentials
                                         else grpc.insecure_channel(addr, options=CHANNEL_OPTIONS))
        return channel


def ready_channel(connection: ConnectionInfo) -> grpc.Channel:
    """The process's channel to `addr`, connected.

    Fails fast with ConnectionFailed when the connection is refused, and after
    CONNECT_TIMEOUT_S when nothing answers; a failed channel is dropped so that the next
    attempt starts afresh instead of waiting out gRPC's reconnect backoff.
    """
    addr = connection.addr
    channel = channel_for(connection)
    settled = threading.Event()
    outcome: list[grpc.ChannelConnectivity] = []

    def watch(state: grpc.ChannelConnectivity) -> None:
        if state in _SETTLED and not settled.is_set():
            outcome.append(state)
            settled.set()

    channel.subscribe(watch, try_to_connect=True)
    try:
        settled.wait(CONNECT_TIMEOUT_S)
    finally:
        channel.unsubscribe(watch)
    if outcome[:1] == [grpc.ChannelConnectivity.READY]:
        return channel
    with _channels_lock:
        if _channels.get(addr) is channel:
            del _channels[addr]
    channel.close()
    if outcome:
        raise ConnectionFailed(f"no meshdbg server reachable at {addr} (connection failed)")
    raise ConnectionFailed(f"no meshdbg server reachable at {addr} (waited {CONNECT_TIMEOUT_S:.0f} s)")


_SETTLED = (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE,
            grpc.ChannelConnectivity.SHUTDOWN)


StreamMethod = Callable[[grpc.Channel], grpc.StreamStreamMultiCallable]  # e.g. lambda ch: Stub(ch).Method


def open_stream(connection: ConnectionInfo, method: StreamMethod, first_message: Message
                ) -> tuple[queue.SimpleQueue, Iterator, Message]:
    """Open a bidirectional stream that starts with `first_message`, and wait for the first reply.

    Returns the outgoing queue (put a message to send it, None to half-close), the iterator
    of the server's messages, and its first one. A server too busy to take the stream (a burst
    of thousands of breakpoints) is asked again with jittered exponential back-off for up to
    BUSY_RETRY_S, so no breakpoint is skipped. Raises ConnectionFailed (or a subclass) when the
    server is unreachable or refuses the stream.
    """
    deadline = time.monotonic() + BUSY_RETRY_S
    pause = BUSY_PAUSE_S
    while True:
        outgoing: queue.SimpleQueue = queue.SimpleQueue()
        outgoing.put(first_message)
        channel = ready_channel(connection)
        responses = method(channel)(iter(outgoing.get, None), metadata=connection.metadata())
        _fork_guard.opened(channel, responses)
        try:
            return outgoing, responses, next(responses)
        except grpc.RpcError as exc:
            if exc.code() not in _BUSY or time.monotonic() + pause > deadline:
                raise error_from_rpc(exc, connection.addr) from exc
        time.sleep(pause * random.uniform(0.5, 1.0))
        pause = min(BUSY_PAUSE_MAX_S, pause * 2)


class RemoteSession:
    """The stream of one session: `send` worker messages, `receive` server messages.

    A reader thread takes the server's messages off the stream as they come, so an
    `interrupt` reaches the worker while its pdb thread runs a command (`n` over a long loop):
    the reader answers it at once through `on_interrupt`, and queues everything else for
    `receive`. A session belongs to the process that opened it; a forked child opens its own.
    """

    def __init__(self, connection: ConnectionInfo, identity: pb.Identity) -> None:
        """Open the stream and wait for the server's welcome; raises ConnectionFailed."""
        self.addr = connection.addr
        self._outgoing, self._responses, welcome = open_stream(
            connection, lambda channel: pb_grpc.DebuggerStub(channel).Session, pb.WorkerMessage(hello=identity))
        self.session_id = welcome.welcome.session_id
        self.pid = os.getpid()
        self.ended = False
        self.on_interrupt: Callable[[], pb.Frame] = pb.Frame  # set by the pdb that owns the session
        self._inbox: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, name=f"meshdbg-session-{self.session_id}", daemon=True)
        self._reader.start()

    @property
    def owned(self) -> bool:
        """Still usable here: not ended, and this is the process that opened it (not a fork)."""
        return not self.ended and self.pid == os.getpid()

    def _read(self) -> None:
        try:
            for message in self._responses:
                if message.HasField("interrupt"):
                    self._answer_interrupt(message.interrupt.request_id)
                else:
                    self._inbox.put(message)
        except grpc.RpcError:
            pass  # the server went away: receive() says so with None
        self._inbox.put(None)

    def _answer_interrupt(self, request_id: int) -> None:
        try:
            frame = self.on_interrupt()
        except Exception:  # a failed break-in must not end the stream; the console's fallback says so
            frame = pb.Frame()
        self.send(pb.WorkerMessage(interrupted=pb.Interrupted(request_id=request_id, frame=frame)))

    def send(self, message: pb.WorkerMessage) -> None:
        """Send `message`; the output of a prompt or an end goes ahead of it in chunks."""
        kind = message.WhichOneof("kind")
        if kind in ("prompt", "ended"):
            body = getattr(message, kind)
            start = tail_start(body.output)
            if start:
                self.send_output(body.output, start)
                body.output = body.output[start:]
        self._outgoing.put(message)

    def send_output(self, text: str, stop: int | None = None) -> None:
        """Stream `text[:stop]` as output chunks, waiting while the wire is behind, so that
        output of any size flows through bounded memory (dropped once the stream is gone)."""
        for piece in chunks(text, stop):
            while self._outgoing.qsize() >= OUTGOING_LIMIT:
                if self._responses.done():
                    return
                time.sleep(_WAIT_S)
            self._outgoing.put(pb.WorkerMessage(output=pb.OutputChunk(text=piece)))

    def receive(self) -> pb.ServerMessage | None:
        """The next server message, or None once the stream is gone."""
        message = self._inbox.get()
        if message is None:
            self._inbox.put(None)  # every later receive() sees the end too
        return message

    def end(self, output: str, reason: EndReason, wait: bool = True) -> None:
        """Tell the server the session is over (once), half-close, and with `wait` let it
        finish the stream (bounded), so no thread of ours is left inside gRPC."""
        if self.ended:
            return
        self.ended = True
        self._outgoing.put(pb.WorkerMessage(ended=pb.Ended(output=output, reason=reason.pb)))
        self._outgoing.put(None)
        if wait and self._reader is not threading.current_thread():
            self._reader.join(END_TIMEOUT_S)
