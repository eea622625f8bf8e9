"""DAP's wire: Content-Length framed JSON messages, and `Channel`, one connection's peer.

A `Channel` reads messages off its stream and dispatches each request to the handler named
after it (`<command>_request`), answers with a response (an error response carries
`body.error`, as the schema requires), sends events and reverse requests (`startDebugging`).
A malformed frame closes that connection only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any

HEADER_LIMIT = 1024  # bytes of one header line
MESSAGE_LIMIT = 16 * 1024 * 1024  # bytes of one message body


class MalformedMessage(Exception):
    """A frame that is not DAP: the connection it came on is closed."""


class RequestFailed(Exception):
    """A request that cannot be done: its message becomes the error response's."""


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream; MalformedMessage for a bad frame."""
    length = None
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial or length is not None:
                raise MalformedMessage("the stream ended inside a header") from None
            return None
        except asyncio.LimitOverrunError:
            raise MalformedMessage("a header line is too long") from None
        if len(line) > HEADER_LIMIT:
            raise MalformedMessage("a header line is too long")
        if line == b"\r\n":
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            if not value.strip().isdigit():
                raise MalformedMessage(f"Content-Length is not a number: {value.strip()!r}")
            length = int(value)
    if length is None or length > MESSAGE_LIMIT:
        raise MalformedMessage("no Content-Length" if length is None else f"a message of {length} bytes")
    try:
        body = await reader.readexactly(length)
        message = json.loads(body)
    except asyncio.IncompleteReadError:
        raise MalformedMessage("the stream ended inside a message") from None
    except ValueError as exc:
        raise MalformedMessage(f"not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str) or not isinstance(message.get("seq"), int):
        raise MalformedMessage("not a DAP message (no type or seq)")
    return message


def encode(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class Channel:
    """One peer's connection: requests to `<command>_request(arguments)` handlers, which return
    the response body (or raise RequestFailed); events and reverse requests the other way."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._seq = itertools.count(1)
        self._answers: dict[int, asyncio.Future[dict]] = {}
        self.closed = asyncio.Event()

    async def serve(self) -> None:
        """Handle the peer's messages until it leaves or sends a malformed frame."""
        try:
            while (message := await read_message(self._reader)) is not None:
                if message["type"] == "request":
                    await self._dispatch(message)
                elif message["type"] == "response":
                    future = self._answers.pop(message.get("request_seq", -1), None)
                    if future is not None and not future.done():
                        future.set_result(message)
        except MalformedMessage as exc:
            print(f"meshdbg dap: closed a connection: {exc}", file=sys.stderr, flush=True)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            await self.close()

    async def _dispatch(self, request: dict[str, Any]) -> None:
        command = str(request.get("command", ""))
        refusal = self.refused(command)
        if refusal:
            self.respond(request, error=refusal)
            return
        handler = getattr(self, f"{command}_request", None)
        if handler is None:
            self.respond(request, error=f"meshdbg does not support the {command!r} request")
            return
        try:
            body = await handler(request.get("arguments") or {})
        except RequestFailed as exc:
            self.respond(request, error=str(exc))
        except (KeyError, TypeError, ValueError) as exc:
            self.respond(request, error=f"malformed {command} request: {type(exc).__name__}: {exc}")
        except Exception as exc:  # a bug of ours: the IDE gets an error, the connection and the adapter live on
            print(f"meshdbg dap: {command} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            self.respond(request, error=f"meshdbg could not do {command}: {type(exc).__name__}: {exc}")
        else:
            self.respond(request, body)

    def refused(self, command: str) -> str:
        """Why `command` may not be served now ("" when it may)."""
        return ""

    def respond(self, request: dict[str, Any], body: dict[str, Any] | None = None, error: str = "") -> None:
        response: dict[str, Any] = {"type": "response", "request_seq": request["seq"], "command": request.get("command", ""),
                                    "success": not error}
        if error:
            response["message"] = error
            response["body"] = {"error": {"id": 1, "format": error.replace("{", "{{").replace("}", "}}"),
                                          "showUser": True}}
        elif body is not None:
            response["body"] = body
        self.send(response)

    def event(self, name: str, body: dict[str, Any] | None = None) -> None:
        self.send({"type": "event", "event": name, **({"body": body} if body is not None else {})})

    def backlog(self) -> int:
        """Bytes sent but not yet taken by the peer's socket."""
        return self._writer.transport.get_write_buffer_size()

    def request(self, command: str, arguments: dict[str, Any]) -> asyncio.Future[dict]:
        """Send a reverse request; the future gets the peer's response."""
        seq = self.send({"type": "request", "command": command, "arguments": arguments})
        future: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self._answers[seq] = future
        return future

    def send(self, message: dict[str, Any]) -> int:
        seq = message["seq"] = next(self._seq)
        if not self._writer.is_closing():
            self._writer.write(encode(message))
        return seq

    async def close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        self._writer.close()
        for future in self._answers.values():
            future.cancel()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass
