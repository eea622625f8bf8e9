"""meshdbg.wire.proto.protobuf_runtime: the pure-Python message module is deferred under upb, and nothing breaks."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
from google.protobuf.internal import api_implementation
from meshdbg.wire.proto import debugger_pb2 as pb
name = "google.protobuf.internal.python_message"
print(api_implementation.Type(), type(sys.modules[name]).__name__)
reply = pb.ListReply()
reply.sessions.add(id=7, prompt="(Pdb) ")
again = pb.ListReply.FromString(reply.SerializeToString())
assert again.sessions[0].id == 7 and "id: 7" in str(again), again
from google.protobuf import json_format
assert json_format.MessageToDict(again) == {"sessions": [{"id": "7", "prompt": "(Pdb) "}]}
print(type(sys.modules[name]).__name__)
from google.protobuf.internal import python_message
python_message.GeneratedProtocolMessageType  # used: executed then
print(type(sys.modules[name]).__name__)
"""


def run_check(env_extra: dict[str, str] | None = None) -> list[str]:
    import os

    env = {**os.environ, **(env_extra or {})}
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_under_upb_the_pure_python_messages_load_only_when_used() -> None:
    backend, at_import, after_use, when_touched = run_check()
    if backend != "upb":
        pytest.skip(f"protobuf's backend here is {backend}")
    assert (at_import, after_use, when_touched) == ("_LazyModule", "_LazyModule", "module")


def test_the_pure_python_backend_is_left_as_it_was() -> None:
    backend, at_import, after_use, when_touched = run_check({"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"})
    assert backend == "python"
    assert (at_import, after_use, when_touched) == ("module", "module", "module")
