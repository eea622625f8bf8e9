"""The expression each value of a stop is reached by (meshdbg.worker.queries): what the IDE's
"Add to Watch" and "Copy as Expression" take, evaluated back in the same frame."""

from __future__ import annotations

import pdb
import sys

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker.queries import answer


class Point:
    def __init__(self) -> None:
        self.x = 3
        self.weird = {("t", 1): "tuple key", object(): "no expression", 2.5: [1, {"deep": True}]}


def expressions_of(expression: str) -> dict[str, str]:
    """Every child's (and grandchild's) expression under `expression`, evaluated in this frame,
    checked to give back that very child."""
    point, pairs, tags = Point(), [(1, 2), (3, 4)], {"a", "b"}  # noqa: F841 (read by the queries)
    debugger = pdb.Pdb()
    debugger.reset()
    debugger.setup(sys._getframe(), None)
    frame_index = debugger.curindex

    def ask(request: pb.QueryRequest) -> pb.QueryAnswer:
        reply = answer(debugger, request)
        assert not reply.error, reply.error
        return reply

    top = ask(pb.QueryRequest(inspect=pb.QueryInspect(frame=frame_index, expression=expression))).value
    found = {}
    pending = [(top.evaluate_name, top.reference)]
    while pending:
        name, reference = pending.pop()
        for child in ask(pb.QueryRequest(variables=pb.QueryVariables(reference=reference))).variables.variables:
            found[f"{name} / {child.name}"] = child.evaluate_name
            if child.evaluate_name:
                again = ask(pb.QueryRequest(inspect=pb.QueryInspect(frame=frame_index, expression=child.evaluate_name)))
                assert again.value.value == child.value  # the expression reaches that very child
            if child.reference and len(found) < 40:
                pending.append((child.evaluate_name, child.reference))
    return found


def test_children_are_reached_by_subscripts_and_attributes_as_debugpy_writes_them() -> None:
    found = expressions_of("point")
    assert found["point / x"] == "point.x"
    assert found["point.weird / ('t', 1)"] == "point.weird[('t', 1)]"
    assert found["point.weird / 2.5"] == "point.weird[2.5]"
    assert found["point.weird[2.5] / 1"] == "point.weird[2.5][1]"
    assert found["point.weird[2.5][1] / 'deep'"] == "point.weird[2.5][1]['deep']"
    assert [name for key, name in found.items() if "object object" in key] == [""]  # no expression makes that key


def test_a_compound_expression_is_bracketed_and_a_set_has_no_expression_for_its_members() -> None:
    found = expressions_of("pairs + [(5, 6)]")
    assert found["pairs + [(5, 6)] / 2"] == "(pairs + [(5, 6)])[2]"
    assert found["(pairs + [(5, 6)])[2] / 0"] == "(pairs + [(5, 6)])[2][0]"
    assert set(expressions_of("tags").values()) == {""}
