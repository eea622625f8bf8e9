"""meshdbg.wire.vocabulary mirrors the proto enums exactly, and nothing else spells its words
(a proto field name given to HasField is not a use of the vocabulary, nor is the name of a CLI
verb or console command in their tables: `interrupt` is a verb as well as a stop reason)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.vocabulary import EndReason, HostState, PromptKind, StackSource, State, StopReason, WatchKind, wire_value

ROOT = Path(__file__).resolve().parents[2]
MIRRORS = [(State, pb.State, "STATE_"), (StopReason, pb.StopReason, "STOP_REASON_"),
           (EndReason, pb.EndReason, "END_REASON_"), (WatchKind, pb.WatchKind, "WATCH_KIND_"),
           (StackSource, pb.StackSource, "STACK_SOURCE_"), (HostState, host_pb.HostState, "HOST_STATE_")]


# Who reads a prompt: mirrored too, but its words ("pdb", "debug") are everyday names elsewhere.
PROMPT_KINDS = (PromptKind, pb.QueryPromptKind, "QUERY_PROMPT_KIND_")


@pytest.mark.parametrize("mirror, proto_enum, prefix", [*MIRRORS, PROMPT_KINDS])
def test_mirror_has_every_proto_value_and_no_other(mirror, proto_enum, prefix) -> None:
    proto_names = {name.removeprefix(prefix) for name in proto_enum.keys()} - {"UNSPECIFIED"}
    assert set(mirror.__members__) == proto_names
    for member in mirror:
        assert mirror.of(member.pb) is member
        assert proto_enum.Name(member.pb) == prefix + member.name


def test_unspecified_and_none() -> None:
    assert State.of(pb.STATE_UNSPECIFIED) is State.RUNNING
    assert EndReason.of(0) is EndReason.WORKER_GONE
    assert wire_value(None) == 0 and wire_value(State.EXITED) == pb.STATE_EXITED


def test_only_a_lost_worker_may_mean_the_rank_died() -> None:
    assert [r for r in EndReason if not r.rank_runs_on] == [EndReason.WORKER_GONE]


COMMAND_TABLES = {"VERBS", "ARGUMENT_PARSERS"}  # debugger/cli.py, debugger/console/commands.py


def _assigned_name(node: ast.Assign | ast.AnnAssign) -> str:
    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
    return target.id if isinstance(target, ast.Name) else ""


def test_no_product_code_spells_the_vocabulary() -> None:
    words = {member.value for mirror, _, _ in MIRRORS for member in mirror}
    offenders = []
    for folder in ("debugger", "worker", "wire", "host"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "vocabulary.py" or "proto" in path.parts:
                continue
            tree = ast.parse(path.read_text())
            field_names = {id(arg) for call in ast.walk(tree) if isinstance(call, ast.Call)
                           and isinstance(call.func, ast.Attribute) and call.func.attr == "HasField" for arg in call.args}
            field_names |= {id(key) for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
                            and isinstance(node.value, ast.Dict) and _assigned_name(node) in COMMAND_TABLES
                            for key in node.value.keys}
            for node in ast.walk(tree):
                if id(node) not in field_names and isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert offenders == []
