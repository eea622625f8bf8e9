"""SessionView read lazily from its message (issue 22): the same fields, the same JSON, still
sanitized; and the listing the server joins from each session's cached bytes."""

from __future__ import annotations

import dataclasses

import pytest

from meshdbg.debugger.sessions import LISTED_FIELD, length_delimited
from meshdbg.debugger.views import Sessions, SessionView
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import PromptKind, State, StopReason


def _info(prompt_kind: int = 0) -> pb.SessionInfo:
    identity = pb.Identity(name="w\x1b[2J", rank=3, coords=[pb.Coord(dim="hosts", index=1), pb.Coord(dim="gpus", index=2)],
                           hostname="h\u202e", pid=42, thread_id=7, thread_name="T\x07", reason=pb.STOP_REASON_INTERRUPT,
                           context={"step\x1b": "9"})
    return pb.SessionInfo(id=5, identity=identity, state=pb.STATE_STOPPED, prompt_kind=prompt_kind,
                          frame=pb.Frame(filename="/x/\x1by.py", function="f", lineno=12))


EXPECTED = SessionView(id=5, name="w\\x1b[2J", rank=3, coords={"hosts": 1, "gpus": 2}, hostname="h\\u202e", pid=42,
                       thread="T\\x07", thread_id=7, state=State.STOPPED, reason=StopReason.INTERRUPT,
                       filename="/x/\\x1by.py", function="f", lineno=12, context={"step\\x1b": "9"})


def test_a_view_from_its_message_has_every_field_sanitized() -> None:
    assert SessionView.from_pb(_info()).to_json() == dataclasses.asdict(EXPECTED)  # no field read before
    view = SessionView.from_pb(_info())
    assert view.state is State.STOPPED  # the first field read reads them all
    assert view == EXPECTED
    assert view.to_json() == dataclasses.asdict(EXPECTED)
    assert view.prompt_kind is PromptKind.PDB


def test_a_prompt_kind_other_than_pdb_is_read() -> None:
    assert SessionView.from_pb(_info(PromptKind.INTERACT.pb)).prompt_kind is PromptKind.INTERACT


def test_json_is_a_copy_and_unknown_attributes_raise() -> None:
    view = SessionView.from_pb(_info())
    view.to_json()["coords"]["hosts"] = 99
    assert view.coords == {"hosts": 1, "gpus": 2}
    with pytest.raises(AttributeError):
        view.no_such_field  # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.rank = 4  # type: ignore[misc]


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 70_000])
def test_joined_elements_are_the_listing(size: int) -> None:
    infos = [pb.SessionInfo(id=n, prompt="p" * size) for n in range(3)]
    workers = pb.ListReply(workers=[pb.WorkerInfo(launcher="x")]).SerializeToString()
    joined = workers + b"".join(length_delimited(LISTED_FIELD, info.SerializeToString()) for info in infos)
    assert pb.ListReply.FromString(joined) == pb.ListReply(sessions=infos, workers=[pb.WorkerInfo(launcher="x")])


def test_a_listing_makes_a_view_only_when_a_session_is_read() -> None:
    infos = pb.ListReply(sessions=[_info(), pb.SessionInfo(id=6), pb.SessionInfo(id=7)]).sessions
    sessions = Sessions(infos)
    assert len(sessions) == 3 and sessions._views == [None, None, None]  # counting made no view
    assert sessions[0] == EXPECTED and sessions._views[1:] == [None, None]
    assert sessions[0] is sessions[0]  # made once, kept
    assert sessions[-1].id == 7 and [s.id for s in sessions[1:]] == [6, 7] and [s.id for s in sessions] == [5, 6, 7]
    assert sessions == [SessionView.from_pb(info) for info in infos] and sessions != [] and sessions != "abc"
    with pytest.raises(IndexError):
        sessions[3]  # noqa: B018
    assert Sessions(pb.ListReply().sessions) == [] and not Sessions(pb.ListReply().sessions)
