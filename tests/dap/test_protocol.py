"""DAP framing (meshdbg.debugger.dap.protocol.read_message) on bytes: what is a message, what
closes the connection."""

from __future__ import annotations

import asyncio

import pytest

from meshdbg.debugger.dap.protocol import MalformedMessage, encode, read_message


def read(data: bytes) -> list:
    async def body() -> list:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        messages = []
        while (message := await read_message(reader)) is not None:
            messages.append(message)
        return messages

    return asyncio.run(body())


def test_messages_round_trip_back_to_back() -> None:
    first, second = {"seq": 1, "type": "request", "command": "threads"}, {"seq": 2, "type": "event", "event": "é"}
    assert read(encode(first) + encode(second)) == [first, second]
    assert read(b"X-Other: 1\r\ncontent-length: 27\r\n\r\n" + b'{"seq": 3, "type": "event"}') == [{"seq": 3, "type": "event"}]


@pytest.mark.parametrize("data, problem", [
    (b"Content-Length: twelve\r\n\r\n{}", "not a number"),
    (b"\r\n{}", "no Content-Length"),
    (b"Content-Length: 5\r\n\r\nnope!", "not JSON"),
    (b'Content-Length: 2\r\n\r\n[]', "not a DAP message"),
    (b'Content-Length: 13\r\n\r\n{"type": "x"}', "not a DAP message"),
    (b"Content-Length: 50\r\n\r\n{}", "ended inside a message"),
    (b"Content-Length: 5", "ended inside a header"),
    (b"Content-Length: 99999999999\r\n\r\n", "a message of"),
    (b"X" * 70000 + b"\r\n", "too long"),
])
def test_a_malformed_frame_is_an_error_naming_it(data: bytes, problem: str) -> None:
    with pytest.raises(MalformedMessage, match=problem):
        read(data)
