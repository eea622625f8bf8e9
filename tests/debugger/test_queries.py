"""Structured queries (meshdbg.worker.queries) against a real worker stopped in pdb, through
the control API's `Query` RPC: data from the paused pdb, never parsed from its text."""

from __future__ import annotations

import pytest

from e2e import Server, line_of
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import NoMatchError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import State, StopReason, WatchKind

TARGET = "ide_target.py"


async def _session_id(client: ControlClient) -> int:
    (session,) = await client.list()
    return session.id


async def _children(client: ControlClient, session_id: int, reference: int) -> dict[str, pb.QueryVariable]:
    answer = await client.query(session_id, pb.QueryRequest(variables=pb.QueryVariables(reference=reference)))
    assert not answer.error, answer.error
    return {v.name: v for v in answer.variables.variables}


def test_frames_scopes_variables_as_pdb_has_them(server: Server) -> None:
    server.worker(TARGET)
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        sid = await _session_id(client)
        frames = (await client.query(sid, pb.QueryRequest(frames=pb.QueryFrames()))).frames
        assert [(f.function, f.lineno) for f in frames.frames][-3:] == [
            ("<module>", line_of(TARGET, "    outer()")), ("outer", line_of(TARGET, "return inner(2)")),
            ("inner", line_of(TARGET, 'print(f"total'))]
        assert frames.current == len(frames.frames) - 1
        scopes = (await client.query(sid, pb.QueryRequest(scopes=pb.QueryScopes(frame=frames.current)))).variables
        assert [s.name for s in scopes.variables] == ["Locals", "Globals"]
        local_vars = await _children(client, sid, scopes.variables[0].reference)
        assert {n: v.value for n, v in local_vars.items() if n != "point"} == {
            "scale": "2", "values": "[1, 2, 3]", "table": "{'a': 1, 'b': [4, 5]}", "name": "'mesh'", "total": "12"}
        assert local_vars["scale"].reference == 0 and local_vars["values"].children == 3
        assert await _children(client, sid, local_vars["values"].reference) == {
            str(i): pb.QueryVariable(name=str(i), value=str(i + 1), type="int", evaluate_name=f"values[{i}]") for i in range(3)}
        table = await _children(client, sid, local_vars["table"].reference)
        assert list(table) == ["'a'", "'b'"] and table["'b'"].value == "[4, 5]"
        point = await _children(client, sid, local_vars["point"].reference)
        assert {n: v.value for n, v in point.items()} == {"x": "3", "y": "4"}
        outer_locals = (await client.query(sid, pb.QueryRequest(scopes=pb.QueryScopes(frame=frames.current - 1))))
        assert await _children(client, sid, outer_locals.variables.variables[0].reference) == {}

    server.run(body)


def test_evaluate_and_set_variable_stick_as_pdb_sees_them(server: Server) -> None:
    worker = server.worker(TARGET)
    server.wait_sessions(1)

    async def body(client: ControlClient) -> tuple[str, str]:
        sid = await _session_id(client)
        frame = len((await client.query(sid, pb.QueryRequest(frames=pb.QueryFrames()))).frames.frames) - 1
        value = (await client.query(sid, pb.QueryRequest(inspect=pb.QueryInspect(frame=frame, expression="total * 2")))).value
        assert (value.value, value.type) == ("24", "int")
        failed = await client.query(sid, pb.QueryRequest(inspect=pb.QueryInspect(frame=frame, expression="nope")))
        assert failed.error == "NameError: name 'nope' is not defined"
        printed = await client.query(sid, pb.QueryRequest(inspect=pb.QueryInspect(
            frame=frame, expression="for v in values: print(v)", statements=True)))
        assert (printed.value.output, printed.value.value) == ("1\n2\n3\n", "")
        scopes = (await client.query(sid, pb.QueryRequest(scopes=pb.QueryScopes(frame=frame)))).variables.variables
        changed = await client.query(sid, pb.QueryRequest(set_variable=pb.QuerySetVariable(
            reference=scopes[0].reference, name="total", expression="100 + scale", frame=frame)))
        assert changed.value.value == "102"
        async with client.attach(rank=0) as pdb:
            shown = (await pdb.send("p total")).output
            stale = scopes[0].reference
            await pdb.send("n")
            after_step = await client.query(sid, pb.QueryRequest(variables=pb.QueryVariables(reference=stale)))
            await pdb.send("c")
        return shown, after_step.error

    shown, stale_error = server.run(body)
    assert shown == "102\n"
    assert "no value with reference" in stale_error
    worker.communicate(timeout=20)


def test_a_set_variable_survives_the_next_step(server: Server) -> None:
    worker = server.worker(TARGET)
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        sid = await _session_id(client)
        frame = len((await client.query(sid, pb.QueryRequest(frames=pb.QueryFrames()))).frames.frames) - 1
        scopes = (await client.query(sid, pb.QueryRequest(scopes=pb.QueryScopes(frame=frame)))).variables.variables
        await client.query(sid, pb.QueryRequest(set_variable=pb.QuerySetVariable(
            reference=scopes[0].reference, name="total", expression="102", frame=frame)))
        await client.resume()

    server.run(body)
    assert "total=102" in worker.communicate(timeout=20)[0]


def test_a_query_to_a_running_or_unknown_session_is_a_clear_error(server: Server) -> None:
    async def body(client: ControlClient) -> None:
        with pytest.raises(NoMatchError):
            await client.query(999, pb.QueryRequest(frames=pb.QueryFrames()))

    server.run(body)


def test_the_exception_of_a_post_mortem_stop_and_a_source_file(server: Server) -> None:
    server.worker(TARGET, 0, "", "crash")
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        await client.resume()
        post_mortem = await _post_mortem_session(client)
        answer = await client.query(post_mortem, pb.QueryRequest(exception=pb.QueryException()))
        assert (answer.exception.type, answer.exception.message) == ("ZeroDivisionError", "division by zero")
        assert "ratio = 1 / 0" in answer.exception.traceback
        frames = (await client.query(post_mortem, pb.QueryRequest(frames=pb.QueryFrames()))).frames.frames
        source = await client.query(post_mortem, pb.QueryRequest(source=pb.QuerySource(filename=frames[-1].filename)))
        assert "def crash():" in source.source.text
        missing = await client.query(post_mortem, pb.QueryRequest(source=pb.QuerySource(filename="/no/such.py")))
        assert missing.error == "LookupError: no source for /no/such.py on this host"

    server.run(body)


async def _post_mortem_session(client: ControlClient) -> int:
    """The id of the first post-mortem session to stop at its prompt."""
    async for kind, session, _ in client.watch():
        if kind is not WatchKind.CLOSED and session.reason == StopReason.POST_MORTEM and session.state is State.STOPPED:
            return session.id
    raise AssertionError("the watch stream ended")
