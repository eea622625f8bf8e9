"""Differential test: the same DAP request script against `meshdbg dap` (one rank under a real
server) and against debugpy (the reference IDE debugger) on the same program gives the same
frames (names, lines), the same variables and values, the same evaluation and the same verified
breakpoint.

Both stop first at the program's `breakpoint()`: pdb (and so meshdbg) at the line after the
call, debugpy at the call itself, a difference of the two debuggers, not of the adapters. So
the script sets a breakpoint on a later line, continues, and compares there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import SCRIPTS, Server, line_of, stop_process, wait_for
from ide import Ide, attach, start_adapter, stop_adapter

TARGET = SCRIPTS / "ide_target.py"
BREAK_AT = line_of("ide_target.py", "return total")
SPECIAL = ("special variables", "function variables", "class variables", "len()")  # debugpy's own groupings


def shown(value: dict) -> str:
    """A value as both must show it (an object's default repr holds its address: its type then)."""
    return value["type"] if " at 0x" in value["value"] else value["value"]


def children(ide: Ide, reference: int) -> dict[str, str]:
    listed = ide.ok("variables", variablesReference=reference)["variables"]
    return {v["name"]: shown(v) for v in listed if v["name"] not in SPECIAL}


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
        "locals": {name: shown(v) for name, v in local_vars.items() if name not in SPECIAL},
        "expanded": {name: children(ide, local_vars[name]["variablesReference"]) for name in ("values", "table", "point")},
        "evaluated": ide.ok("evaluate", expression="total * 2 + len(table)", frameId=ours[0]["id"], context="watch")["result"],
        "hover": ide.ok("evaluate", expression="point.x", frameId=ours[0]["id"], context="hover")["result"],
    }


def under_meshdbg(server: Server) -> dict:
    worker = server.worker(TARGET.name)
    server.wait_sessions(1)
    adapter, port = start_adapter(server.env)
    try:
        parent = Ide(port)
        attach(parent, {"meshdbg": {"token": server.env["MESHDBG_TOKEN"]}})
        child = Ide(port)
        attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
        return request_script(child, child.event("stopped")["body"]["threadId"])
    finally:
        stop_adapter(adapter)
        stop_process(worker)


def under_debugpy(tmp_path: Path) -> dict:
    env = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.pop("PYTHONBREAKPOINT", None)
    port_file = tmp_path / "debugpy.port"
    process = subprocess.Popen([sys.executable, "-Xfrozen_modules=off", str(Path(__file__).parent / "under_debugpy.py"),
                                str(port_file), str(TARGET)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, cwd=tmp_path, start_new_session=True)
    try:
        port = int(wait_for(lambda: port_file.exists() and port_file.read_text(), 20, "debugpy's port"))
        ide = Ide(port, check=False)  # (debugpy sends events of its own, outside the schema)
        attach(ide, {"justMyCode": True})
        return request_script(ide, ide.event("stopped", timeout=20)["body"]["threadId"])
    finally:
        stop_process(process)


@pytest.mark.timeout(120)
def test_the_same_requests_give_the_same_answers_as_debugpy(server: Server, tmp_path: Path) -> None:
    reference = under_debugpy(tmp_path)
    assert reference["frames"][0] == ("inner", BREAK_AT)  # the oracle answered what the script asks
    assert under_meshdbg(server) == reference
