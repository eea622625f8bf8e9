"""The floor of `meshdbg list --json` (bench_floor.py): a fresh process, the same bytes, the same JSON.

    python bench/bench_floor_cli.py ADDR

Fetches a ListReply's bytes with a raw unary call (`/bench.Blob/Get` of bench_core_echo.py,
set to what meshdbg's server answered), parses them with the generated module and prints the
JSON `meshdbg list --json` prints for them, with nothing of meshdbg's own code: its views,
its connection handling, its CLI. bench_floor.py checks both print the same document.
"""

from __future__ import annotations

import json
import sys

import grpc

from meshdbg.wire.proto import debugger_pb2 as pb


def _names(enum, prefix: str, words: dict[str, str] = {}) -> dict[int, str]:
    """Wire value → the word list --json prints (the enum name, lowercased, `_` as a space)."""
    return {value: words.get(name, name.removeprefix(prefix).lower().replace("_", " "))
            for name, value in enum.items()}


STATES = _names(pb.State, "STATE_")
REASONS = _names(pb.StopReason, "STOP_REASON_", {"STOP_REASON_POST_MORTEM": "post-mortem"})
KINDS = _names(pb.QueryPromptKind, "QUERY_PROMPT_KIND_")


def main(addr: str) -> None:
    with grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", -1)]) as channel:
        reply = pb.ListReply.FromString(channel.unary_unary("/bench.Blob/Get")(b""))
    sessions = []
    for info in reply.sessions:
        ident, frame = info.identity, info.frame
        sessions.append({
            "id": info.id, "name": ident.name, "rank": ident.rank,
            "coords": {coord.dim: coord.index for coord in ident.coords}, "hostname": ident.hostname,
            "pid": ident.pid, "thread": ident.thread_name, "thread_id": ident.thread_id, "state": STATES[info.state],
            "reason": REASONS[ident.reason] if ident.reason else "", "filename": frame.filename,
            "function": frame.function, "lineno": frame.lineno, "context": dict(ident.context),
            "prompt_kind": KINDS[info.prompt_kind or pb.QUERY_PROMPT_KIND_PDB]})
    sys.stdout.write(json.dumps(sessions, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
