"""`meshdbg dap` driven as VS Code drives it, without VS Code: a scripted IDE over a real socket,
a real `meshdbg dap` process, a real server and real workers stopped in pdb. Every message,
both ways, is checked against the DAP schema (ide.validate)."""

from __future__ import annotations

import os
import signal

import pytest

from e2e import Server, line_of
from ide import Ide, attach, start_adapter, stop_adapter

TARGET = "ide_target.py"
COORDS = ["hosts=0,gpus=0", "hosts=0,gpus=1", "hosts=1,gpus=0"]


@pytest.fixture
def mesh(server: Server):
    """Three ranks stopped in `inner`, and `meshdbg dap` over their server."""
    workers = [server.worker(TARGET, rank, COORDS[rank]) for rank in range(3)]
    server.wait_sessions(3)
    adapter, port = start_adapter(server.env)
    yield server, workers, port
    print(stop_adapter(adapter))  # shown when the test fails


def open_child(server: Server, port: int) -> tuple[Ide, Ide, dict]:
    """The parent session, then the child it is asked to start: (parent, child, child's configuration)."""
    parent = Ide(port)
    attach(parent, {"meshdbg": {"token": server.env["MESHDBG_TOKEN"]}})
    configuration = parent.reverse_request("startDebugging")["arguments"]["configuration"]
    child = Ide(port)
    attach(child, configuration)
    return parent, child, configuration


def test_parent_starts_one_child_per_group_whose_threads_are_its_ranks(mesh) -> None:
    server, workers, port = mesh
    parent, child, configuration = open_child(server, port)
    assert configuration["connect"] == {"host": "127.0.0.1", "port": port}
    assert configuration["name"].startswith("ranks 0-2: inner (ide_target.py:")
    assert {child.event("stopped", threadId=t)["body"]["reason"] for t in (1, 2, 3)} == {"breakpoint"}
    threads = child.ok("threads")["threads"]
    assert [t["name"] for t in threads] == ["rank 0 (hosts=0,gpus=0)", "rank 1 (hosts=0,gpus=1)", "rank 2 (hosts=1,gpus=0)"]

    frames = child.ok("stackTrace", threadId=2)["stackFrames"]
    stop_line = line_of(TARGET, 'print(f"total')
    assert [(f["name"], f["line"]) for f in frames] == [
        ("inner", stop_line), ("outer", line_of(TARGET, "return inner(2)")), ("<module>", line_of(TARGET, "    outer()"))]
    assert frames[0]["source"]["path"].endswith(TARGET)
    scopes = child.ok("scopes", frameId=frames[0]["id"])["scopes"]
    assert [s["name"] for s in scopes] == ["Locals", "Globals"]
    local_vars = {v["name"]: v for v in child.ok("variables", variablesReference=scopes[0]["variablesReference"])["variables"]}
    assert local_vars["total"]["value"] == "12" and local_vars["values"]["variablesReference"] > 0
    point = child.ok("variables", variablesReference=local_vars["point"]["variablesReference"])["variables"]
    assert [(v["name"], v["value"]) for v in point] == [("x", "3"), ("y", "4")]

    assert child.ok("evaluate", expression="total + 1", frameId=frames[0]["id"], context="watch")["result"] == "13"
    assert child.ok("evaluate", expression="pdb p name", frameId=frames[0]["id"], context="repl")["result"] == "'mesh'"
    rank_half = "int(__import__('os').environ['MESHDBG_RANK']) // 2"
    assert child.ok("evaluate", expression=rank_half, context="repl")["result"] == "ranks 0-1: 0 | rank 2: 1"
    assert child.ok("setVariable", variablesReference=scopes[0]["variablesReference"], name="total",
                    value="7 * 6")["value"] == "42"
    completions = child.ok("completions", text="tot", column=4, frameId=frames[0]["id"])["targets"]
    assert [c["label"] for c in completions] == ["total"]

    child.ok("next", threadId=2, singleThread=True)
    stopped = child.event("stopped", threadId=2, reason="step")
    assert child.ok("stackTrace", threadId=2)["stackFrames"][0]["line"] == stop_line + 1
    assert not [m for m in child.seen if m.get("event") == "stopped" and m["body"]["threadId"] != 2
                and m["seq"] > stopped["seq"]]  # singleThread: the other ranks stayed where they were
    assert child.ok("stackTrace", threadId=1)["stackFrames"][0]["line"] == stop_line

    child.ok("continue", threadId=1)
    for thread in (1, 2, 3):
        child.event("continued", threadId=thread)
    outputs = [w.communicate(timeout=20)[0] for w in workers]
    assert outputs == ["total=12\n", "total=42\n", "total=12\n"]  # the set variable stuck on rank 1 only
    parent.close()
    child.close()


def test_a_killed_rank_ends_its_thread_and_all_of_them_end_the_child(mesh) -> None:
    server, workers, port = mesh
    parent, child, _ = open_child(server, port)
    child.event("stopped", threadId=3)
    os.kill(workers[0].pid, signal.SIGKILL)
    child.event("thread", threadId=1, reason="exited", timeout=1.0)
    assert [t["id"] for t in child.ok("threads")["threads"]] == [2, 3]
    for worker in workers[1:]:
        os.kill(worker.pid, signal.SIGKILL)
    child.event("exited", timeout=1.0)
    child.event("terminated", timeout=1.0)


def test_a_wrong_token_is_refused_and_the_connection_closed(mesh) -> None:
    server, _, port = mesh
    intruder = Ide(port)
    intruder.ok("initialize", adapterID="debugpy")
    assert not intruder.request("threads")["success"]  # nothing before a good attach
    refused = intruder.request("attach", meshdbg={"token": "not-the-token"})
    assert not refused["success"] and "wrong or missing token" in refused["body"]["error"]["format"]
    assert intruder.closed()
    parent, child, _ = open_child(server, port)  # the adapter serves everyone else as before
    assert len(child.ok("threads")["threads"]) == 3


def test_a_malformed_frame_closes_that_connection_only(mesh) -> None:
    server, _, port = mesh
    parent, child, _ = open_child(server, port)
    broken = Ide(port, check=False)
    broken.sock.sendall(b"Content-Length: twelve\r\n\r\n{}")
    assert broken.closed()
    garbage = Ide(port, check=False)
    garbage.sock.sendall(b"Content-Length: 5\r\n\r\nnope!")
    assert garbage.closed()
    assert len(child.ok("threads")["threads"]) == 3


def test_the_ide_leaving_mid_step_leaves_the_ranks_paused(mesh) -> None:
    server, workers, port = mesh
    parent, child, _ = open_child(server, port)
    child.event("stopped", threadId=1)
    child.send({"type": "request", "command": "next", "arguments": {"threadId": 1}})
    child.close()
    parent.close()
    sessions = server.wait_sessions(3)
    assert all(s["state"] == "stopped" for s in sessions)
    assert all(w.poll() is None for w in workers)
    again, child_again, _ = open_child(server, port)  # the freed ranks are offered to the next IDE
    assert len(child_again.ok("threads")["threads"]) == 3


def test_the_server_going_away_ends_the_adapter_with_one_line(server: Server) -> None:
    server.worker(TARGET)
    server.wait_sessions(1)
    adapter, port = start_adapter(server.env)
    parent, child, _ = open_child(server, port)
    server.process.kill()
    child.event("terminated", timeout=15)
    assert adapter.wait(timeout=15) == 3
    errors = adapter.stderr.read().strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("meshdbg: "), errors
