"""Differential test: the same DAP request script against `meshdbg dap` (one rank under a real
server) and against debugpy (the reference IDE debugger) on the same program gives the same
frames (names, lines), the same variables and values, the same evaluation and the same verified
breakpoint, with the expression each variable is reached by; and, on a loop, the same stops for conditions (changed while set), hit counts and
the same logpoint lines.

Both stop first at the program's `breakpoint()`: pdb (and so meshdbg) at the line after the
call, debugpy at the call itself, a difference of the two debuggers, not of the adapters. So
the script sets a breakpoint on a later line, continues, and compares there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from e2e import SCRIPTS, Server, line_of, stop_process, wait_for
from ide import Ide, attach, start_adapter, stop_adapter

TARGET = SCRIPTS / "ide_target.py"
BREAK_AT = line_of("ide_target.py", "return total")
LOOP = SCRIPTS / "ide_loop.py"
SQUARE, TOTAL = line_of("ide_loop.py", "square = i * i"), line_of("ide_loop.py", "total += square")
# Each phase: the breakpoints on SQUARE set at the last stop, then the value of `i` at the stops that follow.
PHASES = (
    ({"condition": "i % 5 == 1"}, 2),
    ({"condition": "i > 10 and i % 5 == 2"}, 1),  # the same line, its condition changed
    ({"hitCondition": "3"}, 1),
    ({"hitCondition": "%3"}, 2),
    ({"hitCondition": ">= 2"}, 1),
)
ZERO = line_of("ide_loop.py", "total = 0")
LOGPOINT = "i={i} square={ square } {str({'k': i}['k'] + 1)}; done"
SPECIAL = ("special variables", "function variables", "class variables", "len()")  # debugpy's own groupings


def shown(value: dict) -> str:
    """A value as both must show it (an object's default repr holds its address: its type then)."""
    return value["type"] if " at 0x" in value["value"] else value["value"]


def children(ide: Ide, reference: int) -> dict[str, tuple[str, str | None]]:
    """A value's children: each one's value and the expression for it (VS Code's "Add to Watch")."""
    listed = ide.ok("variables", variablesReference=reference)["variables"]
    return {v["name"]: (shown(v), v.get("evaluateName")) for v in listed if v["name"] not in SPECIAL}


def child_reference(ide: Ide, reference: int, name: str) -> int:
    listed = ide.ok("variables", variablesReference=reference)["variables"]
    return next(v["variablesReference"] for v in listed if v["name"] == name)


def request_script(ide: Ide, thread_id: int) -> dict:
    """Stop at BREAK_AT, then what an IDE asks at a stop; the answers, comparable."""
    placed = ide.ok("setBreakpoints", source={"path": str(TARGET)}, breakpoints=[{"line": BREAK_AT}])["breakpoints"]
    ide.ok("continue", threadId=thread_id)
    stopped = ide.event("stopped", reason="breakpoint", timeout=20)["body"]["threadId"]
    frames = ide.ok("stackTrace", threadId=stopped)["stackFrames"]
    ours = [f for f in frames if f["source"].get("path") == str(TARGET)]
    scopes = ide.ok("scopes", frameId=ours[0]["id"])["scopes"]
    local_vars = {v["name"]: v for v in ide.ok("variables", variablesReference=scopes[0]["variablesReference"])["variables"]}
    return {
        "breakpoints": [(b["verified"], b["line"]) for b in placed],
        "frames": [(f["name"], f["line"]) for f in ours],
        "scopes": [s["name"] for s in scopes],
        "locals": {name: (shown(v), v.get("evaluateName")) for name, v in local_vars.items() if name not in SPECIAL},
        "expanded": {name: children(ide, local_vars[name]["variablesReference"]) for name in ("values", "table", "point")},
        "nested": children(ide, child_reference(ide, local_vars["table"]["variablesReference"], "'b'")),
        "watched": children(ide, ide.ok("evaluate", expression="table", frameId=ours[0]["id"],
                                         context="watch")["variablesReference"]),
        "evaluated": ide.ok("evaluate", expression="total * 2 + len(table)", frameId=ours[0]["id"], context="watch")["result"],
        "hover": ide.ok("evaluate", expression="point.x", frameId=ours[0]["id"], context="hover")["result"],
    }


def breakpoint_script(ide: Ide, thread_id: int) -> dict:
    """The PHASES on LOOP, then a logpoint on TOTAL for the rest of the loop: where it stopped."""
    source = {"path": str(LOOP)}
    phases = []
    for fields, stops in PHASES:
        placed = ide.ok("setBreakpoints", source=source, breakpoints=[{"line": SQUARE, **fields}])["breakpoints"]
        seen = []
        for _ in range(stops):
            ide.ok("continue", threadId=thread_id)
            thread_id = ide.event("stopped", reason="breakpoint", timeout=20)["body"]["threadId"]
            top = ide.ok("stackTrace", threadId=thread_id)["stackFrames"][0]
            seen.append((top["line"], ide.ok("evaluate", expression="i", frameId=top["id"], context="watch")["result"]))
        phases.append(([(b["verified"], b["line"]) for b in placed], seen))
    ide.ok("setBreakpoints", source=source, breakpoints=[])
    logpoint = ide.ok("setBreakpoints", source=source, breakpoints=[{"line": TOTAL, "logMessage": LOGPOINT}])
    ide.ok("continue", threadId=thread_id)
    return {"phases": phases, "logpoint": [(b["verified"], b["line"]) for b in logpoint["breakpoints"]]}


def jump_script(ide: Ide, thread_id: int) -> dict:
    """Stopped in the loop at i = 5, "Jump to Cursor" back to `total = 0`, then a step: where it stands."""
    source = {"path": str(LOOP)}
    ide.ok("setBreakpoints", source=source, breakpoints=[{"line": SQUARE, "condition": "i == 5"}])
    ide.ok("continue", threadId=thread_id)
    thread_id = ide.event("stopped", reason="breakpoint", timeout=20)["body"]["threadId"]
    ide.ok("setBreakpoints", source=source, breakpoints=[])
    targets = ide.ok("gotoTargets", source=source, line=ZERO)["targets"]
    ide.ok("goto", threadId=thread_id, targetId=targets[0]["id"])
    reason = ide.event("stopped", threadId=thread_id, timeout=20)["body"]["reason"]

    def where() -> tuple[int, str, str]:
        top = ide.ok("stackTrace", threadId=thread_id)["stackFrames"][0]
        values = [ide.ok("evaluate", expression=name, frameId=top["id"], context="watch")["result"]
                  for name in ("i", "total")]
        return (top["line"], *values)

    jumped = where()
    ide.ok("next", threadId=thread_id)
    ide.event("stopped", threadId=thread_id, reason="step", timeout=20)
    return {"targets": [(t["line"], t["label"]) for t in targets], "reason": reason, "jumped": jumped,
            "stepped": where()}


def logpoint_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("i=")]


def under_meshdbg(server: Server, target: Path, script: Callable[[Ide, int], dict]) -> dict:
    """`script`'s answers from `meshdbg dap` on TARGET, with what the rank printed ("stdout")."""
    worker = server.worker(target.name)
    server.wait_sessions(1)
    adapter, port = start_adapter(server.env)
    try:
        parent = Ide(port)
        attach(parent, {"meshdbg": {"token": server.env["MESHDBG_TOKEN"]}})
        child = Ide(port)
        attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
        answers = script(child, child.event("stopped")["body"]["threadId"])
        child.ok("disconnect", terminateDebuggee=True)
        return {**answers, "stdout": worker.communicate(timeout=20)[0]}
    finally:
        stop_adapter(adapter)
        stop_process(worker)


def under_debugpy(tmp_path: Path, target: Path, script: Callable[[Ide, int], dict], runs_to_end: bool = False) -> dict:
    """`script`'s answers from debugpy on TARGET; with `runs_to_end` (the script lets the
    program end), the program's output events too ("stdout")."""
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("PYTHONBREAKPOINT", None)
    port_file = tmp_path / "debugpy.port"
    process = subprocess.Popen([sys.executable, "-Xfrozen_modules=off", str(Path(__file__).parent / "under_debugpy.py"),
                                str(port_file), str(target)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, cwd=tmp_path, start_new_session=True)
    try:
        port = int(wait_for(lambda: port_file.exists() and port_file.read_text(), 20, "debugpy's port"))
        ide = Ide(port, check=False)  # (debugpy sends events of its own, outside the schema)
        attach(ide, {"justMyCode": True})
        answers = script(ide, ide.event("stopped", timeout=20)["body"]["threadId"])
        if not runs_to_end:
            return answers
        ide.wait(lambda m: m.get("event") in ("terminated", "exited"), "the program's end", timeout=20)
        printed = "".join(m["body"]["output"] for m in ide.seen
                          if m.get("event") == "output" and m["body"].get("category") == "stdout")
        return {**answers, "stdout": printed}
    finally:
        stop_process(process)


@pytest.mark.timeout(120)
def test_the_same_requests_give_the_same_answers_as_debugpy(server: Server, tmp_path: Path) -> None:
    reference = under_debugpy(tmp_path, TARGET, request_script)
    assert reference["frames"][0] == ("inner", BREAK_AT)  # the oracle answered what the script asks
    ours = under_meshdbg(server, TARGET, request_script)
    assert ours.pop("stdout") == "total=12\n"
    assert ours == reference


@pytest.mark.timeout(120)
def test_conditions_hit_counts_and_logpoints_stop_and_print_as_debugpy(server: Server, tmp_path: Path) -> None:
    reference = under_debugpy(tmp_path, LOOP, breakpoint_script, runs_to_end=True)
    assert reference["phases"][0][1] == [(SQUARE, "1"), (SQUARE, "6")]  # the oracle answered what the script asks
    assert logpoint_lines(reference["stdout"])[0] == "i=23 square=529 24; done"
    ours = under_meshdbg(server, LOOP, breakpoint_script)
    assert ours["phases"] == reference["phases"]
    assert ours["logpoint"] == reference["logpoint"]
    assert logpoint_lines(ours["stdout"]) == logpoint_lines(reference["stdout"])  # every hit printed, none stopped


@pytest.mark.timeout(120)
def test_jump_to_cursor_goes_where_debugpy_goes(server: Server, tmp_path: Path) -> None:
    reference = under_debugpy(tmp_path, LOOP, jump_script)
    assert reference["jumped"] == (ZERO, "5", "30")  # the oracle jumped back: i and total as they were
    ours = under_meshdbg(server, LOOP, jump_script)
    ours.pop("stdout")
    assert ours == reference
