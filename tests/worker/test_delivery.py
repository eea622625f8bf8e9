"""meshdbg.worker.delivery over a real gRPC stream: messages sent from several threads arrive in
each thread's order, every reply is delivered off the caller's thread, and the end comes once,
after the call is done. On the three paths: the direct one (gRPC's channel thread, which this
grpcio allows), the polled one (a call with a queue of its own, meshdbg.worker.polled, which
the main thread's stops take; with no thread waiting, its helper polls), and the portable one
(a reader thread and gRPC's request thread), which a gRPC without the internals the direct
one uses would take."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from concurrent import futures
from typing import Iterator

import grpc
import pytest

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker import delivery, polled
from meshdbg.worker.delivery import deliver_each, outbox

METHOD = "/test.Echo/Echo"


def _echo(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
    yield from requests


@pytest.fixture
def channel() -> Iterator[grpc.Channel]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "test.Echo", {"Echo": grpc.stream_stream_rpc_method_handler(_echo)})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel
    server.stop(None)


@pytest.fixture(params=["direct", "polled", "portable"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "portable":
        monkeypatch.setattr(delivery, "direct_path", lambda responses: False)
    return str(request.param)


def _line(text: str) -> pb.ServerMessage:
    return pb.ServerMessage(input=pb.Input(line=text))


def _stream(channel: grpc.Channel, path: str) -> tuple[queue.SimpleQueue[pb.ServerMessage | None], Iterator[pb.ServerMessage]]:
    """An echo stream whose first message came back (its request thread is done sending), on `path`."""
    outgoing: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
    multicallable = channel.stream_stream(METHOD, request_serializer=pb.ServerMessage.SerializeToString,
                                          response_deserializer=pb.ServerMessage.FromString)
    if path == "polled":
        assert polled.available(multicallable)  # this grpcio has what the polled path uses
        responses = polled.open_polled(multicallable, _line("hello"), None)
    else:
        outgoing.put(_line("hello"))
        responses = multicallable(iter(outgoing.get, None))
    assert next(responses).input.line == "hello"
    assert delivery.direct_path(responses) == (path != "portable")  # this grpcio has what the direct path uses
    assert (polled.poller_of(responses) is not None) == (path == "polled")
    return outgoing, responses


def test_threads_sends_arrive_in_order_and_the_last_closes_the_stream(channel: grpc.Channel, path: str) -> None:
    outgoing, responses = _stream(channel, path)

    arrived: list[str] = []
    ends: list[bool] = []  # whether the call was done when its end came
    over = threading.Event()

    def deliver(message: pb.ServerMessage | None) -> None:
        assert threading.current_thread() is not threading.main_thread()
        if message is None:
            ends.append(responses.done())
            over.set()
        else:
            arrived.append(message.input.line)

    deliver_each(responses, deliver)
    sender = outbox(responses, outgoing)
    per_thread = 300

    def send(name: str) -> None:
        for index in range(per_thread):
            sender.send(_line(f"{name} {index}"))

    senders = [threading.Thread(target=send, args=(name,)) for name in "abc"]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    sender.send(_line("last"), last=True)
    assert over.wait(10), "the end of the stream was never delivered"
    assert ends == [True]
    for name in "abc":
        assert [line for line in arrived if line.split()[0] == name] == [f"{name} {i}" for i in range(per_thread)]
    assert len(arrived) == 3 * per_thread + 1 and arrived[-1] == "last"
    sender.send(_line("too late"))  # after the last: dropped, not an error
    assert sender.backlog == 0


def test_a_broken_stream_ends_its_delivery(channel: grpc.Channel, path: str) -> None:
    outgoing, responses = _stream(channel, path)
    over = threading.Event()
    deliver_each(responses, lambda message: message is None and over.set())
    sender = outbox(responses, outgoing)
    responses.cancel()
    assert over.wait(10)
    sender.send(_line("after the break"))  # dropped, or queued for a request thread that is gone
    outgoing.put(None)


def test_a_send_waits_for_the_first_messages_send_to_complete(channel: grpc.Channel) -> None:
    """The reply to the first message can be handled before that message's send completes (a
    loaded machine); the outbox then waits for that completion, the request thread's, rather
    than queue a message behind it that nothing would ever start. The first send's completion
    is held back here as the channel's thread does when it handles the reply first."""
    outgoing, responses = _stream(channel, "direct")
    state = responses._state
    with state.condition:
        state.due.add(delivery._SEND)  # the first message's send, not yet completed

    def complete_first_send() -> None:
        with state.condition:
            state.due.discard(delivery._SEND)
            state.condition.notify_all()

    threading.Timer(0.2, complete_first_send).start()
    arrived: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
    deliver_each(responses, arrived.put)
    sender = outbox(responses, outgoing)
    sender.send(_line("prompt"), last=True)
    assert arrived.get(timeout=10).input.line == "prompt"
    assert arrived.get(timeout=10) is None


def test_flush_waits_for_the_sends_and_close_half_closes_after_them(channel: grpc.Channel, path: str) -> None:
    """What a kept session stream needs (meshdbg.worker.parking): its end handed to the
    transport before the program runs on (`flush`), and at exit a half-close with no message
    after what was sent (`close`), which the server answers by ending the call."""
    outgoing, responses = _stream(channel, path)
    arrived: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
    deliver_each(responses, arrived.put)
    sender = outbox(responses, outgoing)
    for index in range(50):
        sender.send(_line(f"line {index}"))
    assert sender.flush(10)
    assert sender.backlog == 0
    sender.close()
    assert [arrived.get(timeout=10).input.line for _ in range(50)] == [f"line {index}" for index in range(50)]
    assert arrived.get(timeout=10) is None  # the echo's request iterator ended: the call is over
    assert responses.code() is grpc.StatusCode.OK
    sender.close()  # once: nothing more to do
    assert sender.flush(1)  # the stream is over: nothing waits


def test_a_send_started_while_the_last_ones_completion_is_handled_is_waited_for() -> None:
    """Between a send's completion taking it off the call (gRPC's event handler) and the outbox
    starting the next queued message, another thread can start a send of its own (nothing was
    in flight) and a third queue one behind it: the next one then waits for that send's
    completion. It was started at once, a second send in flight, which gRPC refuses ("call
    error 8"), in gRPC's channel thread, which died of it: a rank streaming a large output with
    the program writing beside it stopped answering (tests/faults/test_slow_clients.py, ~1 in 16
    under load). The window is held open here while the two other threads send; in a process
    of its own, since a channel whose thread died never closes."""
    done = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                           "import test_delivery; test_delivery.send_in_the_window()"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.split() == ["first", "second", "third"], done.stdout + done.stderr


def send_in_the_window() -> None:
    """The scenario of the test above: prints the lines that came back, and exits at once."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "test.Echo", {"Echo": grpc.stream_stream_rpc_method_handler(_echo)})])
    channel = grpc.insecure_channel(f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}")
    server.start()
    outgoing, responses = _stream(channel, "direct")
    arrived: queue.SimpleQueue[pb.ServerMessage | None] = queue.SimpleQueue()
    deliver_each(responses, arrived.put)
    sender = outbox(responses, outgoing)
    assert isinstance(sender, delivery.Outbox)
    fill_state, held = sender._fill_state, []

    def completion_with_others_sending(event: object) -> bool:
        done = fill_state(event)  # the send that completed is off the call now
        if not held:
            held.append(True)
            for line in ("second", "third"):  # the second starts at once, the third queues behind it
                thread = threading.Thread(target=sender.send, args=(_line(line),))
                thread.start()
                thread.join()
        return done

    sender._fill_state = completion_with_others_sending  # type: ignore[method-assign]
    sender.send(_line("first"))
    try:
        for _ in range(3):
            message = arrived.get(timeout=10)
            print(message.input.line if message is not None else "(the end)", flush=True)
    finally:
        os._exit(0)  # not through gRPC's shutdown, which waits for a dead channel thread
