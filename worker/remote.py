"""One pdb session's bidirectional stream to the DebugClient, from the worker's side.

Synchronous gRPC on purpose: the pdb thread blocks on `receive()` exactly as local pdb blocks
on stdin, while the worker's other threads keep running. One channel per server address is
shared by all sessions of the process.
"""

from __future__ import annotations

import ctypes
import os
import queue
import random
import threading
import time
from typing import Any, Callable, cast

import grpc
from grpc import _common as _grpc_common
from google.protobuf.message import Message

from meshdbg.wire.chunks import chunks, tail_start
from meshdbg.wire.connection import ConnectionInfo
from meshdbg.wire.environment import RECONNECT_S
from meshdbg.wire.keepalive import CLIENT_KEEPALIVE
from meshdbg.wire.tls import channel_credentials
from meshdbg.wire.waking import server_waking
from meshdbg.wire.errors import ConnectionFailed, MeshdbgError
from meshdbg.wire.status import error_from_rpc
from meshdbg.wire.vocabulary import EndReason
from meshdbg.worker import parking
from meshdbg.worker.forking import FORK_SUPPORT, ForkGuard, fork_support_off
from meshdbg.worker.notices import setting
from meshdbg.worker.process_id import this_pid
from meshdbg.worker.polled import available, open_polled
from meshdbg.worker.signal_hold import Held
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import debugger_pb2_grpc as pb_grpc

CONNECT_TIMEOUT_S = 5.0  # the longest single wait for a connection's state to change
REFUSED_GRACE_S = 1.5  # a channel failing this long after its first failure is refused (reconnects take <= 1 s)
END_TIMEOUT_S = 5.0  # how long an ending session waits for the server to close its stream (or gRPC to send its end)
RETRY_PAUSE_S = 0.05  # the first pause between tries; it doubles up to RETRY_PAUSE_MAX_S
RETRY_PAUSE_MAX_S = 2.0
# A server that accepts connections but refuses or drops new streams (a burst of 10,000
# breakpoints on a starved machine) is waited for up to this many reconnect windows.
LIVE_WAIT_FACTOR = 10
# What a live but overloaded server answers a new stream with: too many streams at once, a
# stream dropped before its handler ran (CANCELLED, seen in bursts of 10,000 on a loaded
# machine), or a hello that reached it too late (DEADLINE_EXCEEDED, the worker's own threads starved).
_BUSY = (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE,
         grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED)
OUTGOING_LIMIT = 8  # output chunks queued for sending before pdb's writes wait for the wire
_WAIT_S = 0.001
# A hung server is noticed in ~4 s; a server that comes back is found within a second.
CHANNEL_OPTIONS = [*CLIENT_KEEPALIVE, ("grpc.initial_reconnect_backoff_ms", 200),
                   ("grpc.min_reconnect_backoff_ms", 200), ("grpc.max_reconnect_backoff_ms", 1000)]

# Every thread blocked in a synchronous gRPC call (each session's reader, each stop waiting
# for its welcome) wakes every grpc._common.MAXIMUM_WAIT_TIMEOUT (0.1 s), so that a signal
# handler is never late; only the main thread runs signal handlers, though. With 2,000 threads
# stopped in one process, even one wake-up a second each kept the GIL in a convoy (90 % of the
# CPU in the kernel) and starved the streams: 700 of 2,000 listed after 330 s, against all
# 2,000 in 20 s with this. So other threads wake only when gRPC tells them, or every
# THREAD_WAIT_S; the main thread keeps gRPC's short waits (and a timed wait keeps its deadline).
THREAD_WAIT_S = 60.0
_SIGNAL_WAIT_S = getattr(_grpc_common, "MAXIMUM_WAIT_TIMEOUT", 0.1)
_grpc_wait_once = _grpc_common._wait_once


def _wait_once(wait_fn: Callable[..., bool], timeout: float, spin_cb: Callable[[], None] | None) -> None:
    if threading.current_thread() is threading.main_thread():
        timeout = min(timeout, _SIGNAL_WAIT_S)
    _grpc_wait_once(wait_fn, timeout, spin_cb)


_grpc_common.MAXIMUM_WAIT_TIMEOUT = THREAD_WAIT_S
_grpc_common._wait_once = _wait_once

_channels: dict[str, grpc.Channel] = {}
_channels_lock = threading.Lock()
_inherited: list[grpc.Channel] = []  # in a forked child: the parent's channels, kept and never used
_no_grpc_here = ""  # why this process cannot use gRPC at all (a forked child, see _own_channels_in_child)


def _own_channels_in_child() -> None:
    """In a forked child: set the parent's channels aside, so that the child's first stop
    opens a channel of its own. The parent's channel is driven by gRPC's threads of the
    parent, which a fork does not copy: gRPC starts one for a channel only when it has no
    call open, and under `meshdbg run` every rank keeps its agent stream open, so a forked
    child's stream on it was never driven (its stop waited for the welcome for good: a
    DataLoader worker's breakpoint()). Set aside, not closed: closing would shut down the
    connection the parent still uses; kept referenced for the same reason. The parent's
    parked streams go aside with them.

    With gRPC's fork support turned off, a child of a parent that used gRPC cannot use it at
    all: its first call would wait for good (a breakpoint in a DataLoader worker held it for
    the reconnect window, then went on). Its stops say so at once instead (`channel_for`).
    """
    global _channels_lock, _no_grpc_here
    _channels_lock = threading.Lock()  # another thread of the parent may have held it at the fork
    if _channels and fork_support_off():
        _no_grpc_here = (f"this forked child cannot reach the server: {FORK_SUPPORT}={os.environ[FORK_SUPPORT]} "
                         f"leaves gRPC unusable after a fork (leave it unset to debug forked children)")
    _inherited.extend(_channels.values())
    _channels.clear()
    parking.forget_in_child()


_fork_guard = ForkGuard(lambda: list(_channels.values()))
_fork_guard.install(in_child=_own_channels_in_child)


def channel_for(connection: ConnectionInfo) -> grpc.Channel:
    """The process's channel to the server, created on first use (over TLS when pinned), and
    never closed: every thread of the process shares it, and closing a channel under threads
    that use it fails their streams ("Channel closed!") or crashes gRPC. A channel whose server
    went away reconnects by itself within a second when it comes back (CHANNEL_OPTIONS).
    ConnectionFailed, saying why, in a forked child that cannot use gRPC."""
    if _no_grpc_here:
        raise ConnectionFailed(_no_grpc_here)
    addr = connection.addr
    with _channels_lock:
        channel = _channels.get(addr)
        if channel is None:
            credentials = channel_credentials(addr, connection.fingerprint)
            channel = _channels[addr] = (grpc.secure_channel(addr, credentials, options=CHANNEL_OPTIONS) if credentials
                                         else grpc.insecure_channel(addr, options=CHANNEL_OPTIONS))
            _never_freed(channel)
        return channel


def _never_freed(channel: grpc.Channel) -> None:
    """Keep `channel` alive past the interpreter's own end. Freed, gRPC closes a channel, and
    its close waits for every call and connectivity watch of it to finish, which only gRPC's
    daemon threads finish: during the interpreter's finalization they are frozen, so a channel
    freed there (the order modules are cleared in depends on the program: a wrapper that ran
    the script with runpy, a stop that had just failed to connect) hung the process at its
    exit for good. The process's end closes its connections anyway, as a SIGKILL's does."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(channel))


def connected_now(channel: grpc.Channel) -> bool:
    """Whether `channel` is connected at this moment, asked of gRPC's core without a
    subscription. Every stop of a process reaches the server through its one channel, almost
    always connected already; a subscription would start gRPC's polling thread for each stop
    (and end it 0.2 s after): about 1.3 ms of the 5–6 ms a stop cost each process when 32
    ranks stopped and went on together on 2 cores (issue 22). False where this gRPC has no
    such call: the subscription then says it, as before."""
    check = getattr(getattr(channel, "_channel", None), "check_connectivity_state", None)
    if check is None:
        return False
    try:
        state = _grpc_common.CYGRPC_CONNECTIVITY_STATE_TO_CHANNEL_CONNECTIVITY.get(check(False))
    except Exception:  # a core that answers otherwise: ask the slow way
        return False
    return state is grpc.ChannelConnectivity.READY


def ready_channel(connection: ConnectionInfo, deadline: float) -> grpc.Channel:
    """The process's channel to the server, connected.

    A server that is slow to answer (a loaded machine, a burst of thousands of breakpoints, a
    hung server that may wake up) is waited for until `deadline`. A refused connection (the
    channel still failing REFUSED_GRACE_S after its first failure, which covers one reconnect
    after an earlier outage, and no stopped or waking server at the address: `server_waking`)
    raises ConnectionFailed then: whoever retries resolves the server again, since it may have moved.
    A server stopped for a few seconds (SIGSTOP, a starved machine) fails gRPC's connection
    too, its handshake unanswered, but the kernel still accepts at its port: a stop reached
    meanwhile waits for it instead of letting the rank run on (`server_waking`).
    """
    channel = channel_for(connection)
    if connected_now(channel):
        return channel
    # Entered as the plain lock: Condition's own enter is Python code, where the user's Ctrl-C
    # during a slow connect could raise with the lock taken, and gRPC's thread calling `watch`
    # would wait for it for good.
    lock = threading.Lock()
    changed = threading.Condition(lock)
    states: list[grpc.ChannelConnectivity] = []

    def watch(state: grpc.ChannelConnectivity) -> None:
        with lock:
            states.append(state)
            changed.notify_all()

    channel.subscribe(watch, try_to_connect=True)
    failed_since: float | None = None
    try:
        with lock:
            while True:
                now = time.monotonic()
                if states and states[-1] is grpc.ChannelConnectivity.READY:
                    return channel
                if failed_since is None and grpc.ChannelConnectivity.TRANSIENT_FAILURE in states:
                    failed_since = now
                if failed_since is not None and now >= failed_since + REFUSED_GRACE_S:
                    if not server_waking(connection.addr):
                        raise ConnectionFailed(f"no meshdbg server reachable at {connection.addr} (connection failed)")
                    failed_since = None  # stopped, not gone: waited for until the deadline
                    states.clear()
                if now >= deadline and states:  # the channel's state is known, and it is not READY
                    raise ConnectionFailed(f"no meshdbg server reachable at {connection.addr} (no answer)")
                until = deadline if failed_since is None else min(deadline, failed_since + REFUSED_GRACE_S)
                changed.wait(min(max(until - now, 0.0), CONNECT_TIMEOUT_S) if states else CONNECT_TIMEOUT_S)
    finally:
        channel.unsubscribe(watch)


StreamMethod = Callable[[grpc.Channel], grpc.StreamStreamMultiCallable]  # e.g. lambda ch: Stub(ch).Method


def open_stream(connection: ConnectionInfo, method: StreamMethod, first_message: Message,
                window_s: float | None = None, polled: bool = False) -> tuple[queue.SimpleQueue, Any, Any]:
    """Open a bidirectional stream that starts with `first_message`, and wait for the first reply.

    Returns the outgoing queue (put a message to send it, None to half-close), the iterator
    of the server's messages (also a grpc.Future: `done()`, `cancel()`), and its first one
    (the two typed Any: the generated stubs of the services are untyped). A server too busy or too slow to take the
    stream (a burst of thousands of breakpoints on a loaded machine) is asked again with
    jittered exponential back-off, so no breakpoint is skipped: until no connection could be
    made for the reconnect window (`window_s`, default MESHDBG_RECONNECT_S), counted
    from the last time the server accepted one, and for LIVE_WAIT_FACTOR windows at most.
    Raises ConnectionFailed (or a subclass) when the server is unreachable (refused) or
    refuses the stream. With `polled` (and a gRPC that allows it), the stream's completions
    are polled by the thread that waits for them (meshdbg.worker.polled): its later messages
    go through meshdbg.worker.delivery's Outbox, not the queue.
    """
    started = time.monotonic()
    deadline = started + (setting(RECONNECT_S) if window_s is None else window_s)
    pause = RETRY_PAUSE_S
    while True:
        outgoing: queue.SimpleQueue = queue.SimpleQueue()
        outgoing.put(first_message)
        channel = ready_channel(connection, deadline)
        # Connected: the server is alive, so a refusal now is load, not absence. The window
        # counts again from here (bounded by LIVE_WAIT_FACTOR windows in all).
        window = setting(RECONNECT_S)
        deadline = max(deadline, min(time.monotonic() + window, started + LIVE_WAIT_FACTOR * window))
        multicallable = method(channel)
        if polled and available(multicallable):
            responses = open_polled(multicallable, first_message, connection.metadata())
        else:
            responses = multicallable(iter(outgoing.get, None), metadata=connection.metadata())
        _fork_guard.opened(channel, cast(grpc.Future, responses))  # a stream's replies are a grpc.Future too
        try:
            return outgoing, responses, next(responses)
        except grpc.RpcError as exc:
            outgoing.put(None)  # lets go of gRPC's thread that reads `outgoing` for this call
            if exc.code() not in _BUSY or time.monotonic() >= deadline:
                raise error_from_rpc(exc, connection.addr) from exc
        time.sleep(min(pause * random.uniform(0.5, 1.0), max(0.0, deadline - time.monotonic())))
        pause = min(RETRY_PAUSE_MAX_S, pause * 2)


def within_window(attempt: Callable[[float], object]) -> bool:
    """Call `attempt(seconds_left)` until it returns without a MeshdbgError (the server is not
    there yet: no connection file, refused, silent), with jittered back-off, for up to the
    reconnect window; whether it succeeded."""
    deadline = time.monotonic() + setting(RECONNECT_S)
    pause = RETRY_PAUSE_S
    while True:
        remaining = deadline - time.monotonic()
        try:
            attempt(max(0.0, remaining))
            return True
        except MeshdbgError:
            if remaining <= 0:
                return False
        time.sleep(min(max(0.0, deadline - time.monotonic()), pause * random.uniform(0.5, 1.0)))
        pause = min(RETRY_PAUSE_MAX_S, pause * 2)


def reopen(broken: queue.SimpleQueue, attempt: Callable[[float], object]) -> bool:
    """After a stream broke: let go of gRPC's thread that read the broken call's outgoing
    queue, then `within_window(attempt)` to open a new one; whether it opened."""
    broken.put(None)
    return within_window(attempt)


class RemoteSession:
    """The stream of one session: `send` worker messages, `receive` server messages.

    gRPC's channel thread takes the server's messages off the stream as they come
    (meshdbg.worker.delivery), so an `interrupt` reaches the worker while its pdb thread runs
    a command (`n` over a long loop): it is answered at once through `on_interrupt`, and
    everything else is queued for `receive`, with no thread of ours in between. The main
    thread's stream has a completion queue of its own instead, which `receive` polls itself
    (meshdbg.worker.polled): the message it waits for is taken by the thread that waits, and
    a helper thread polls while it runs a command. A session
    belongs to the process that opened it; a forked child opens its own. A new stop opens on
    a stream the process's last stops kept (meshdbg.worker.parking) when it has one, and its
    end keeps the stream for the next (`end(park=True)`).

    A broken stream does not end the stop: `receive` reconnects (to the server the connection
    resolves to then, so a server restarted on the same connection file counts) for up to the
    reconnect window, re-registers this stop under its old id, and sends its last prompt again.
    Only a server's goodbye, or the window passing, ends it; `farewell` then says why.
    """

    def __init__(self, connect: Callable[[], ConnectionInfo], identity: pb.Identity) -> None:
        """Open the stream and wait for the server's welcome; raises ConnectionFailed."""
        self._connect = connect
        self._identity = identity
        self._inbox: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
        self._last_prompt: pb.WorkerMessage | None = None
        self.pid = this_pid()
        self.ended = False
        self._park = False  # the stream is to be kept for the process's next stop (`end`)
        self.farewell = ""  # why the stream is over for good, once it is
        self.on_interrupt: Callable[[], pb.Frame] = pb.Frame  # set by the pdb that owns the session
        self.on_command: Callable[[], None] = lambda: None  # a line or a resume is about to be received (idem)
        self._open(connect())

    def _open(self, connection: ConnectionInfo, window_s: float | None = None) -> None:
        """Open this stop on a stream: a parked one of the process when it has one (a new
        stop, not one re-registering after its stream broke: `window_s`), else a new one."""
        hello = pb.Identity()
        hello.CopyFrom(self._identity)
        hello.resumes_session = getattr(self, "session_id", 0)
        first = pb.WorkerMessage(hello=hello)
        parked = parking.take(connection.addr) if window_s is None else None
        welcome = self._reopen(parked, first) if parked is not None else None
        if welcome is None:
            # (The main thread's stop polls its stream itself; see meshdbg.worker.polled for
            # why no other thread's does.)
            outgoing, responses, welcome = open_stream(
                connection, lambda channel: pb_grpc.DebuggerStub(channel).Session, first, window_s,
                polled=threading.current_thread() is threading.main_thread())
            self._stream = parking.SessionStream(outgoing, responses, self._deliver_to(threading.Event()))
        self.addr = connection.addr
        self.session_id = welcome.welcome.session_id

    def _reopen(self, parked: parking.SessionStream, first: pb.WorkerMessage) -> pb.ServerMessage | None:
        """Open this stop on `parked` (a stream of the process's last stops); its welcome, or
        None when the stream turned out dead (closed: the caller opens a new one)."""
        if not parked.claim(self._deliver_to(threading.Event())):
            return None
        parked.outbox.send(first)
        reply = self._next_message(parked)
        if reply is not None and reply.HasField("welcome"):
            self._stream = parked
            return reply
        parked.close()  # its end, or the server's goodbye (it shuts down): nothing more of it is read
        self._inbox = queue.SimpleQueue()
        return None

    def _deliver_to(self, over: threading.Event) -> parking.Deliver:
        """What a stream of this session delivers its messages to; `over` is set once its end
        was delivered."""
        self._over = over
        return lambda message: self._arrived(message, over)

    @property
    def owned(self) -> bool:
        """Still usable here: not ended, and this is the process that opened it (not a fork)."""
        return not self.ended and self.pid == this_pid()

    def _arrived(self, message: pb.ServerMessage | None, over: threading.Event) -> None:
        """A message of the stream, or its end (None: receive() reconnects, or says so)."""
        kind = message.WhichOneof("kind") if message is not None else None
        if kind == "input" or kind == "resume":  # (a command's line: read once, on every command's path)
            self.on_command()
        elif message is not None and message.HasField("interrupt"):
            self._answer_interrupt(message.interrupt.request_id)
            return
        self._inbox.put(message)
        if message is None:
            over.set()

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
        if kind == "prompt":
            self._last_prompt = message  # what a reconnected stream shows again
        self._stream.outbox.send(message)

    def send_output(self, text: str, stop: int | None = None) -> None:
        """Stream `text[:stop]` as output chunks, waiting while the wire is behind, so that
        output of any size flows through bounded memory (dropped once the stream is gone)."""
        for piece in chunks(text, stop):
            while self._stream.outbox.backlog >= OUTGOING_LIMIT:
                with Held():  # (gRPC's `done` enters a Condition in Python: SIGINT's exception there left it taken)
                    over = self._stream.responses.done()
                if over:
                    return
                time.sleep(_WAIT_S)  # (where a command's Ctrl-C lands, as in local pdb's print to a slow terminal)
            self._stream.outbox.send(pb.WorkerMessage(output=pb.OutputChunk(text=piece)))

    def _next_message(self, stream: parking.SessionStream) -> pb.ServerMessage | None:
        """The next message `stream` delivered (None: its end). On a polled stream this thread
        polls for it; one given up (meshdbg.worker.polled) is over too."""
        poller = stream.poller
        if poller is not None:
            inbox = self._inbox
            poller.wait_for(lambda: not inbox.empty())
            if inbox.empty():  # (its end is delivered before it is over: a call given up)
                return None
        return self._inbox.get()

    def receive(self) -> pb.ServerMessage | None:
        """The next server message, or None once the stream is over for good (`farewell`)."""
        return self._server_message(self._next_message(self._stream))

    def send_then_receive(self, message: pb.WorkerMessage) -> pb.ServerMessage | None:
        """`send(message)`, then `receive()` the answer: the send and the wait inside one hold
        of the main thread's signals (meshdbg.worker.signal_hold), where each took one of its
        own (issue 22). A signal that comes during the send is run by the wait, at once, as
        one that comes during the wait; a reconnect is outside the hold, as it was."""
        with Held():
            self.send(message)
            taken = self._next_message(self._stream)
        return self._server_message(taken)

    def _server_message(self, message: pb.ServerMessage | None) -> pb.ServerMessage | None:
        """`message`, just taken off the stream, if the server sent it; else (the stream's end,
        the server's goodbye) the first message of a stream reconnected, or None once the
        stream is over for good (`farewell`)."""
        while True:
            if message is not None and not message.HasField("goodbye"):
                return message
            if message is not None:
                self.farewell = f"the debugger at {self.addr} shut down ({message.goodbye.reason})"
            elif not self.farewell and self._reconnect():
                message = self._next_message(self._stream)
                continue
            self._inbox.put(None)  # every later receive() sees the end too
            return None

    def _reconnect(self) -> bool:
        """Reach the server again within the reconnect window and re-register this stop;
        False (with `farewell` set) when no server answered in time."""
        if not reopen(self._stream.outgoing, lambda window_s: self._open(self._connect(), window_s)):
            self.farewell = f"no debugger reachable at {self.addr} for {setting(RECONNECT_S):g} s ({RECONNECT_S.name})"
            return False
        if self._last_prompt is not None:
            self._stream.outbox.send(self._last_prompt)
        return True

    def end(self, output: str, reason: EndReason, park: bool = False) -> None:
        """Tell the server the session is over (once: a later call does nothing). With `park`,
        keep the stream for the process's next stop if there is room (`wait_closed` parks
        it), else half-close it."""
        if not self.ended:
            self.ended = True
            self._park = park and parking.room(self.addr)
            self._stream.outbox.send(pb.WorkerMessage(ended=pb.Ended(output=output, reason=reason.pb, park=self._park)),
                                     last=not self._park)
            poller = self._stream.poller
            if poller is not None and not self._park:
                poller.hand_over()  # (this thread polls no more: the program runs on)

    def wait_closed(self) -> None:
        """Make sure (bounded) the server gets the end before the program goes on, as it may
        exit at once: a stream kept for the next stop once the end was handed to the
        transport (the server reads it before anything else of the stream, the process's exit
        included; meshdbg.worker.parking), any other once the server closed it.
        On a polled stream this thread polls for the send's completion itself, and the helper
        takes over at its next look: handing the call over first woke the helper, which then
        woke this thread and contended for the GIL with the rest of its way out (3-10 % of
        the `continue` of 32 ranks on 2 cores, issue 22)."""
        if self._park:
            poller = self._stream.poller
            outbox = self._stream.outbox
            if poller is not None:
                poller.wait_for(lambda: outbox.flush(0), END_TIMEOUT_S)
            else:
                outbox.flush(END_TIMEOUT_S)
            parking.park(self.addr, self._stream)
        else:
            self._over.wait(END_TIMEOUT_S)
