"""A scripted IDE for the DAP tests: Content-Length framed JSON over a real socket, every message
(both ways) checked against the Debug Adapter Protocol's JSON schema (debugProtocol.json, as
debugpy ships it), plus a real `meshdbg dap` process to talk to.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import jsonschema

SCHEMA = json.loads((Path(__file__).parent / "debugProtocol.json").read_text())
_VALIDATOR = jsonschema.Draft7Validator(SCHEMA)
WAIT_S = 10.0


def schema_name(message: dict) -> str:
    """The schema definition a message must match: `StackTraceRequest`, `StoppedEvent`, ...;
    a failed response is an `ErrorResponse`."""
    kind = message["type"]
    if kind == "response" and not message.get("success"):
        return "ErrorResponse"
    name = message["command"] if kind in ("request", "response") else message["event"]
    return name[0].upper() + name[1:] + kind.capitalize()


def validate(message: dict) -> None:
    """Raise jsonschema.ValidationError unless `message` is what the DAP schema says it is."""
    name = schema_name(message)
    if name not in SCHEMA["definitions"]:
        raise AssertionError(f"{name} is not in the DAP schema: {message}")
    errors = list(_VALIDATOR.evolve(schema={"$ref": f"#/definitions/{name}", "definitions": SCHEMA["definitions"]})
                  .iter_errors(message))
    if errors:
        raise AssertionError(f"{name} does not match the DAP schema: {errors[0].message}\n{message}")


class Ide:
    """One DAP connection, driven as an IDE drives it; a reader thread queues what comes."""

    def __init__(self, port: int, check: bool = True) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as VS Code's (Node's) sockets
        self.check = check
        self.seq = 0
        self.inbox: queue.Queue[dict | None] = queue.Queue()
        self.seen: list[dict] = []
        self.reading = threading.Event()  # clear it to stop taking messages off the socket (a slow IDE)
        self.reading.set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.sock.makefile("rb")
        try:
            while self.reading.wait():
                length = None
                while (line := stream.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    break
                self.inbox.put(json.loads(stream.read(length)))
        except (OSError, ValueError):
            pass
        self.inbox.put(None)

    def send(self, message: dict) -> int:
        self.seq += 1
        message = {"seq": self.seq, **message}
        if self.check:
            validate(message)
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def next(self, timeout: float = WAIT_S) -> dict | None:
        """The next message (None once the adapter closed the connection)."""
        message = self.inbox.get(timeout=timeout)
        if message is not None:
            if self.check:
                validate(message)
            self.seen.append(message)
        return message

    def wait(self, predicate: Callable[[dict], bool], what: str, timeout: float = WAIT_S) -> dict:
        """The first message (from now on) that satisfies `predicate`; earlier ones are kept in `seen`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.next(max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {what} within {timeout:g} s; got {self.seen[-5:]}") from None
            if message is None:
                raise AssertionError(f"the adapter closed the connection while waiting for {what}")
            if predicate(message):
                return message

    def request(self, command: str, timeout: float = WAIT_S, **arguments: Any) -> dict:
        """The response to one request (whatever events come before it stay in `seen`)."""
        seq = self.send({"type": "request", "command": command, "arguments": arguments})
        return self.wait(lambda m: m["type"] == "response" and m["request_seq"] == seq, f"{command} response", timeout)

    def ok(self, command: str, **arguments: Any) -> dict:
        """The body of a successful response."""
        response = self.request(command, **arguments)
        assert response["success"], response
        return response.get("body", {})

    def event(self, name: str, timeout: float = WAIT_S, **fields: Any) -> dict:
        """The next `name` event whose body has `fields` (or one already seen but not yet taken)."""
        def wanted(m: dict) -> bool:
            return m["type"] == "event" and m["event"] == name and all(m.get("body", {}).get(k) == v for k, v in fields.items())

        for message in self.seen:
            if wanted(message) and not message.get("_taken"):
                message["_taken"] = True
                return message
        message = self.wait(wanted, f"{name} event {fields}", timeout)
        message["_taken"] = True
        return message

    def reverse_request(self, command: str) -> dict:
        """A request from the adapter (already seen or next), answered with success."""
        request = next((m for m in self.seen if m["type"] == "request" and m["command"] == command and not m.get("_taken")),
                       None) or self.wait(lambda m: m["type"] == "request" and m["command"] == command, command)
        request["_taken"] = True
        self.send({"type": "response", "request_seq": request["seq"], "command": command, "success": True})
        return request

    def closed(self, timeout: float = WAIT_S) -> bool:
        """Whether the adapter closes this connection within `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.next(deadline - time.monotonic()) is None:
                    return True
            except queue.Empty:
                return False
        return False

    def close(self) -> None:
        """Leave as an IDE that quits does: the connection closes at once (the reader's file
        would otherwise keep it open)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def attach(ide: Ide, configuration: dict) -> dict:
    """initialize, attach with `configuration`, initialized, configurationDone (as VS Code orders
    them): the capabilities."""
    capabilities = ide.ok("initialize", adapterID="debugpy", clientID="meshdbg-tests", pathFormat="path",
                          linesStartAt1=True, columnsStartAt1=True, supportsStartDebuggingRequest=True)
    seq = ide.send({"type": "request", "command": "attach", "arguments": configuration})
    ide.event("initialized")
    ide.ok("configurationDone")  # (debugpy answers the attach only after this)
    response = next((m for m in ide.seen if m["type"] == "response" and m["request_seq"] == seq), None) or ide.wait(
        lambda m: m["type"] == "response" and m["request_seq"] == seq, "attach response")
    assert response["success"], response
    return capabilities


def start_adapter(env: dict[str, str], *options: str) -> tuple[subprocess.Popen, int]:
    """`meshdbg dap --port 0` against the server `env` names; the process and its port."""
    process = subprocess.Popen([sys.executable, "-m", "meshdbg", "dap", "--port", "0", *options], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline().strip()
    if not first.startswith("meshdbg dap: listening on 127.0.0.1:"):
        process.kill()
        raise AssertionError(f"meshdbg dap did not start: {first!r} {process.stderr.read()}")
    return process, int(first.rsplit(":", 1)[1])


def stop_adapter(process: subprocess.Popen) -> str:
    """Stop `meshdbg dap` as Ctrl-C does; its stderr."""
    process.terminate()
    return process.communicate(timeout=10)[1]
