"""Fuzzing every RPC of a live `meshdbg serve` (control, worker and agent streams) with random
fields and garbage bytes.

Whatever a client or a worker sends, the server answers with a status that says what was
wrong (INVALID_ARGUMENT, NOT_FOUND, ...) or serves it; never UNKNOWN, which is what gRPC
answers when a handler raised (a traceback on the server), and never a traceback on its
stderr. Messages are built from the protocol's own descriptors, so a new field is fuzzed too.
"""

from __future__ import annotations

from typing import Iterator

import grpc
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from e2e import Server, start_server, stop_process
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import mesh_pb2 as mesh_pb

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
METADATA = (("authorization", "Bearer test-token"),)
pytestmark = pytest.mark.timeout(180)  # up to 25 calls of up to 3 s each, on a loaded machine
SELECTION_BITS = st.sampled_from(["all", "*", "0", "1-" + "1" * 4301, "ranks(hosts=" + "9" * 5000 + ")", "0,3-5",
                                  "ranks(:)", "ranks(0:0:0)", "\x00", "ranks(", "2147483648", "5-3"])
TEXT = st.one_of(SELECTION_BITS, st.text(max_size=12))
NUMBERS = {FieldDescriptor.TYPE_INT32: st.integers(-2**31, 2**31 - 1), FieldDescriptor.TYPE_INT64: st.integers(-2**63, 2**63 - 1),
           FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1), FieldDescriptor.TYPE_UINT64: st.integers(0, 2**64 - 1),
           FieldDescriptor.TYPE_DOUBLE: st.floats(allow_nan=True, allow_infinity=True),
           FieldDescriptor.TYPE_FLOAT: st.floats(width=32, allow_nan=True, allow_infinity=True),
           FieldDescriptor.TYPE_BOOL: st.booleans()}


def value_of(field: FieldDescriptor, depth: int) -> st.SearchStrategy:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return message_of(field.message_type, depth + 1)
    if field.type == FieldDescriptor.TYPE_ENUM:
        return st.integers(-3, 12)  # unknown enum values included
    if field.type == FieldDescriptor.TYPE_STRING:
        return TEXT
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    return NUMBERS[field.type]


@st.composite
def _message(draw: st.DrawFn, descriptor: Descriptor, depth: int) -> object:
    message = GetMessageClass(descriptor)()
    if depth > 3 or not descriptor.fields:
        return message
    for field in draw(st.lists(st.sampled_from(list(descriptor.fields)), max_size=4, unique=True)):
        if field.is_repeated and field.message_type and field.message_type.GetOptions().map_entry:
            entry = field.message_type.fields_by_name
            getattr(message, field.name).update(draw(st.dictionaries(value_of(entry["key"], depth),
                                                                     value_of(entry["value"], depth), max_size=2)))
        elif field.is_repeated:
            values = draw(st.lists(value_of(field, depth), max_size=2))
            target = getattr(message, field.name)
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                for value in values:
                    target.add().CopyFrom(value)
            else:
                target.extend(values)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(message, field.name).CopyFrom(draw(value_of(field, depth)))
        else:
            setattr(message, field.name, draw(value_of(field, depth)))
    return message


def message_of(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy:
    return _message(descriptor, depth)


METHODS = {method.name: method for service in (pb.DESCRIPTOR.services_by_name["Debugger"],
                                                mesh_pb.DESCRIPTOR.services_by_name["Mesh"]) for method in service.methods}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, grpc.Channel]]:
    """A server with a worker that always stops again, so requests reach live sessions too."""
    server = start_server(tmp_path_factory.mktemp("fuzz-rpcs"))
    server.worker("stop_forever.py", 0, "hosts=0")
    server.wait_sessions(1)
    channel = grpc.insecure_channel(server.addr)
    try:
        yield server, channel
    finally:
        channel.close()
        for worker in server.workers:
            stop_process(worker)
        server.process.terminate()
        _, stderr = server.process.communicate(timeout=10)
        assert "Traceback" not in stderr, stderr


def call(channel: grpc.Channel, method: str, requests: list[bytes]) -> grpc.StatusCode:
    """Send `requests` (serialized) to `method`; the status it ends with (OK when it answered)."""
    descriptor = METHODS[method]
    path = f"/{descriptor.containing_service.full_name}/{method}"
    kind = (descriptor.client_streaming, descriptor.server_streaming)
    identity = dict(request_serializer=None, response_deserializer=None)
    try:
        if kind == (False, False):
            channel.unary_unary(path, **identity)(requests[0], metadata=METADATA, timeout=3)
        elif kind == (False, True):
            for _ in channel.unary_stream(path, **identity)(requests[0], metadata=METADATA, timeout=0.5):
                pass
        else:
            for _ in channel.stream_stream(path, **identity)(iter(requests), metadata=METADATA, timeout=0.5):
                pass
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


def request_type(method: str) -> Descriptor:
    return METHODS[method].input_type


@pytest.mark.parametrize("method", list(METHODS))
def test_random_fields_never_answer_unknown(live: tuple[Server, grpc.Channel], method: str) -> None:
    server, channel = live

    @settings(FUZZ, max_examples=8 if method == "Watch" else FUZZ.max_examples)  # one bool to fuzz, 0.5 s a call
    @given(st.lists(message_of(request_type(method)), min_size=1, max_size=3))
    def fuzz(requests: list[object]) -> None:
        status = call(channel, method, [r.SerializeToString() for r in requests])
        assert status != grpc.StatusCode.UNKNOWN, (method, requests)

    fuzz()
    assert server.process.poll() is None and server.workers[0].poll() is None


@pytest.mark.parametrize("method", list(METHODS))
def test_garbage_bytes_never_answer_unknown(live: tuple[Server, grpc.Channel], method: str) -> None:
    server, channel = live

    @FUZZ
    @given(st.lists(st.binary(max_size=40), min_size=1, max_size=3))
    def fuzz(requests: list[bytes]) -> None:
        assert call(channel, method, requests) != grpc.StatusCode.UNKNOWN, (method, requests)

    fuzz()
    assert server.process.poll() is None


@pytest.mark.parametrize("method", [name for name, m in METHODS.items() if "selection" in m.input_type.fields_by_name])
def test_a_huge_range_end_is_invalid_argument(live: tuple[Server, grpc.Channel], method: str) -> None:
    request = GetMessageClass(request_type(method))(selection="1-" + "1" * 4301)
    assert call(live[1], method, [request.SerializeToString()]) == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0, 1e300])
def test_compare_takes_any_timeout(live: tuple[Server, grpc.Channel], timeout: float) -> None:
    request = pb.CompareRequest(selection="all", expression="1 + 1", timeout_s=timeout)
    assert call(live[1], "Compare", [request.SerializeToString()]) in (grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT)
