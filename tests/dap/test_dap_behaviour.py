"""What `meshdbg dap` does beyond one child's requests: later stops, breakpoints kept for ranks
that stop later, group steps, post-mortem stops, the console driving the same ranks, and the
IDE letting the ranks go. Real server, real workers, real `meshdbg dap`, scripted IDE."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from typing import Iterator

from e2e import SCRIPTS, Server, line_of, wait_for
from watching import wait_sessions
from ide import Ide, attach, start_adapter, stop_adapter
from meshdbg.debugger.control import ControlClient

TARGET = "ide_target.py"


def parent_of(server: Server, port: int) -> Ide:
    parent = Ide(port)
    attach(parent, {"meshdbg": {"token": server.env["MESHDBG_TOKEN"]}})
    return parent


def next_child(parent: Ide, port: int) -> Ide:
    child = Ide(port)
    attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
    return child


@contextlib.contextmanager
def child_of_one_rank(server: Server, script: str, *args: str) -> Iterator[Ide]:
    """Rank 0 running SCRIPT stopped in pdb, and the child session that shows it (stopped)."""
    server.worker(script, 0, "", *args)
    server.wait_sessions(1)
    adapter, port = start_adapter(server.env)
    try:
        child = next_child(parent_of(server, port), port)
        child.event("stopped", threadId=1)
        yield child
    finally:
        stop_adapter(adapter)


async def console_lines(client: ControlClient, *lines: str) -> str:
    """What the console's pdb lines print in rank 0's session."""
    async with client.attach(rank=0) as attached:
        return "".join([(await attached.send(line)).output for line in lines])


def test_a_later_stop_opens_a_new_child_with_the_breakpoints_already_set(server: Server) -> None:
    first = server.worker(TARGET, 0, "gpus=0")
    server.wait_sessions(1)
    adapter, port = start_adapter(server.env)
    try:
        parent = parent_of(server, port)
        child = next_child(parent, port)
        child.event("stopped", threadId=1)
        break_at = line_of(TARGET, "return total")
        placed = child.ok("setBreakpoints", source={"path": str(SCRIPTS / TARGET)}, breakpoints=[{"line": break_at}])
        assert placed["breakpoints"][0]["verified"] and placed["breakpoints"][0]["line"] == break_at
        blank = child.ok("setBreakpoints", source={"path": str(SCRIPTS / TARGET)},
                         breakpoints=[{"line": break_at}, {"line": line_of(TARGET, "A program for")}])
        assert [b["verified"] for b in blank["breakpoints"]] == [True, False]  # pdb refused a docstring line

        second = server.worker(TARGET, 1, "gpus=1")  # stops in no live child: a child of its own
        later = next_child(parent, port)
        later.event("stopped", threadId=2)
        assert [t["name"] for t in later.ok("threads")["threads"]] == ["rank 1 (gpus=1)"]
        later.ok("continue", threadId=2)
        later.event("stopped", threadId=2, reason="breakpoint")  # the IDE's breakpoint, set before it stopped
        assert later.ok("stackTrace", threadId=2)["stackFrames"][0]["line"] == break_at
        for ide, thread in ((child, 1), (later, 2)):
            ide.ok("setBreakpoints", source={"path": str(SCRIPTS / TARGET)}, breakpoints=[])
            ide.ok("disconnect", terminateDebuggee=True)  # the ranks go on, without the breakpoint
        assert first.communicate(timeout=20)[0] == second.communicate(timeout=20)[0] == "total=12\n"
    finally:
        stop_adapter(adapter)


def test_a_step_without_single_thread_moves_the_whole_group(server: Server) -> None:
    for rank in range(2):
        server.worker(TARGET, rank, f"gpus={rank}")
    server.wait_sessions(2)
    adapter, port = start_adapter(server.env)
    try:
        child = next_child(parent_of(server, port), port)
        stop_line = line_of(TARGET, 'print(f"total')
        child.ok("next", threadId=1)
        for thread in (1, 2):
            child.event("stopped", threadId=thread, reason="step")
            assert child.ok("stackTrace", threadId=thread)["stackFrames"][0]["line"] == stop_line + 1
    finally:
        stop_adapter(adapter)


def test_a_continue_that_leaves_a_rank_not_answering_says_so_and_not_all_threads_continued(server: Server) -> None:
    """Rank 1 listed not answering (SIGSTOPped) is not resumed with its group: the Debug Console
    says why, and the IDE is not told every thread continued (it showed rank 1 running while it
    stayed paused)."""
    server.worker(TARGET, 0, "gpus=0")
    hung = server.worker(TARGET, 1, "gpus=1")
    server.wait_sessions(2)
    adapter, port = start_adapter(server.env)
    try:
        child = next_child(parent_of(server, port), port)
        child.event("stopped", threadId=1)
        os.kill(hung.pid, signal.SIGSTOP)
        try:
            wait_for(lambda: [s["state"] for s in server.sessions() if s["rank"] == 1] == ["not answering"],
                     what="rank 1 listed not answering")
            assert child.ok("continue", threadId=1) == {"allThreadsContinued": False}
            said = f"not resumed: rank 1 (pid {hung.pid}) is stopped (SIGSTOP) and not answering\n"
            child.event("output", category="stderr", output=said)
        finally:
            os.kill(hung.pid, signal.SIGCONT)
    finally:
        stop_adapter(adapter)


def test_a_post_mortem_stop_shows_its_exception(server: Server) -> None:
    with child_of_one_rank(server, TARGET, "crash") as child:
        child.ok("continue", threadId=1)
        child.event("stopped", threadId=1, reason="exception")
        info = child.ok("exceptionInfo", threadId=1)
        assert (info["exceptionId"], info["description"], info["breakMode"]) == ("ZeroDivisionError", "division by zero", "unhandled")
        assert "ratio = 1 / 0" in info["details"]["stackTrace"]
        assert child.ok("stackTrace", threadId=1)["stackFrames"][0]["name"] == "crash"


def test_the_console_and_the_ide_drive_the_same_rank_and_both_see_where_it_stands(server: Server) -> None:
    stop_line = line_of(TARGET, 'print(f"total')
    with child_of_one_rank(server, TARGET) as child:

        async def console_steps(client: ControlClient) -> int:
            async with client.attach(rank=0) as console:
                return (await console.send("n")).lineno

        assert server.run(console_steps) == stop_line + 1
        child.event("stopped", threadId=1, reason="step")  # the IDE hears of the console's step
        assert child.ok("stackTrace", threadId=1)["stackFrames"][0]["line"] == stop_line + 1
        child.ok("next", threadId=1)  # onto the return of `inner`
        child.event("stopped", threadId=1, reason="step")

        assert server.run(console_lines, "retval") == "12\n"  # ... and the console sees where the IDE's step left it


def test_pause_breaks_into_a_rank_running_a_step(server: Server) -> None:
    with child_of_one_rank(server, "ide_spin.py") as child:
        child.ok("next", threadId=1)  # over a minute of spinning
        wait_sessions(server.env, {"running": [0]})
        child.ok("pause", threadId=1)
        child.event("stopped", threadId=1, reason="pause")
        assert child.ok("stackTrace", threadId=1)["stackFrames"][0]["name"] == "spin"


def test_a_rank_in_interact_is_not_stepped_but_told_why(server: Server) -> None:
    with child_of_one_rank(server, TARGET) as child:

        async def interact(client: ControlClient) -> None:
            async with client.attach(rank=0) as console:
                await console.send("interact")

        server.run(interact)
        child.event("stopped", threadId=1, reason="step")  # the IDE hears the console's command
        refused = child.request("next", threadId=1)
        assert not refused["success"] and "is in pdb's interact" in refused["message"]
        assert child.ok("evaluate", expression="pdb exit()", frameId=child.ok("stackTrace", threadId=1)["stackFrames"][0]["id"],
                        context="repl") is not None
        child.ok("next", threadId=1)  # back at pdb's prompt: steps again
        child.event("stopped", threadId=1, reason="step")


def test_continue_reaches_a_rank_in_interact(server: Server) -> None:
    """(It was refused like a step: "end that first". A resume leaves `interact` as Ctrl-D
    would, then continues, as `meshdbg continue` does.)"""
    with child_of_one_rank(server, TARGET) as child:

        async def interact(client: ControlClient) -> None:
            async with client.attach(rank=0) as console:
                await console.send("interact")

        server.run(interact)
        child.event("stopped", threadId=1, reason="step")
        child.ok("continue", threadId=1)
        wait_sessions(server.env, {"live": []})  # out of interact, continued: its session is over


def test_a_source_only_the_rank_has_comes_from_the_rank(server: Server) -> None:
    with child_of_one_rank(server, "ide_remote_source.py") as child:
        top = child.ok("stackTrace", threadId=1)["stackFrames"][0]
        assert (top["name"], top["source"]["path"]) == ("generated", "/meshdbg-remote-only/generated.py")
        content = child.ok("source", source=top["source"], sourceReference=top["source"]["sourceReference"])["content"]
        assert content.splitlines()[1] == "    answer = 42"
        local = child.ok("stackTrace", threadId=1)["stackFrames"][-1]["source"]
        assert "sourceReference" not in local  # a file this machine has is opened by path
        by_path = child.request("source", source={"path": "/etc/shadow"}, sourceReference=0)
        assert not by_path["success"] and by_path["message"].startswith("no sourceReference")  # (no file read for it)


def test_the_console_sees_the_ides_breakpoints_and_keeps_its_own_on_the_same_line(server: Server) -> None:
    """The IDE's breakpoint is pdb's: the console's `b` lists its condition and hit count; the IDE
    changing it replaces it, removing it clears it alone, not a breakpoint the console set on
    the same line."""
    loop = str(SCRIPTS / "ide_loop.py")
    square = line_of("ide_loop.py", "square = i * i")

    with child_of_one_rank(server, "ide_loop.py") as child:
        child.ok("setBreakpoints", source={"path": loop}, breakpoints=[{"line": square, "condition": "i == 3"}])
        child.ok("setBreakpoints", source={"path": loop},
                 breakpoints=[{"line": square, "condition": "i > 4", "hitCondition": "% 2"}])
        listed = server.run(console_lines, f"b {loop}:{square}", "b")
        assert "i == 3" not in listed and "stop only if (i > 4) and " in listed and ".hits % 2 == 0" in listed
        assert listed.count(f"at {loop}:{square}") == 3  # (the console's answer to its `b`, then the list of two)
        child.ok("setBreakpoints", source={"path": loop}, breakpoints=[])
        left = server.run(console_lines, "b")
        assert left.count(f"at {loop}:{square}") == 1 and "stop only if" not in left
        child.ok("continue", threadId=1)
        child.event("stopped", threadId=1, reason="breakpoint")  # the console's breakpoint, at i = 0
        frame = child.ok("stackTrace", threadId=1)["stackFrames"][0]
        assert child.ok("evaluate", expression="i", frameId=frame["id"], context="watch")["result"] == "0"


def test_a_jump_pdb_refuses_fails_with_pdbs_reason_and_the_rank_stays(server: Server) -> None:
    """Jump to Cursor into another file, or past the end of the frame's code: the request fails
    saying why (pdb's words for the second), and the rank is where it was."""
    loop = str(SCRIPTS / "ide_loop.py")
    with child_of_one_rank(server, "ide_loop.py") as child:
        before = child.ok("stackTrace", threadId=1)["stackFrames"][0]["line"]
        elsewhere = child.ok("gotoTargets", source={"path": str(SCRIPTS / TARGET)}, line=5)["targets"][0]
        refused = child.request("goto", threadId=1, targetId=elsewhere["id"])
        assert not refused["success"] and "only within the file of the frame it stopped in" in refused["message"]
        past_the_end = child.ok("gotoTargets", source={"path": loop}, line=100)
        refused = child.request("goto", threadId=1, targetId=past_the_end["targets"][0]["id"])
        assert not refused["success"] and refused["message"].startswith("Jump failed")
        assert child.ok("stackTrace", threadId=1)["stackFrames"][0]["line"] == before
        child.ok("next", threadId=1)  # the rank still steps from where it stood
        child.event("stopped", threadId=1, reason="step")


def test_a_function_breakpoint_stops_where_local_pdbs_b_function_stops(server: Server) -> None:
    """VS Code's function breakpoints are pdb's `b NAME`: a name found from the rank's frame or
    along sys.path is verified at the file and line pdb chose, one pdb cannot find is not (with
    pdb's reason); the rank stops where local pdb's `b run` stops it."""
    loop = SCRIPTS / "ide_loop.py"
    local = subprocess.run([sys.executable, "-m", "pdb", str(loop)], input="b run\nc\nc\nc\n", capture_output=True,
                           text=True, timeout=60, env={"PYTHONBREAKPOINT": "0", "PATH": "/usr/bin:/bin"}).stdout
    local_line = int(re.search(r"ide_loop\.py\((\d+)\)run\(\)", local).group(1))  # the oracle's stop
    with child_of_one_rank(server, "ide_loop.py") as child:
        placed = child.ok("setFunctionBreakpoints", breakpoints=[
            {"name": "run"}, {"name": "no_such_function"}, {"name": "textwrap.dedent"}, {"name": " "}, {"name": "run"}])
        run, missing, library, unnamed, again = placed["breakpoints"]  # one answer for each asked, in order
        assert not unnamed["verified"] and again == run
        assert run["verified"] and run["source"]["path"] == str(loop) and run["line"] == local_line - 1  # the def
        assert not missing["verified"] and "no_such_function" in missing["message"]
        assert library["verified"] and library["source"]["path"].endswith("/textwrap.py")
        child.ok("continue", threadId=1)
        child.event("stopped", threadId=1, reason="breakpoint")
        top = child.ok("stackTrace", threadId=1)["stackFrames"][0]
        assert (top["name"], top["line"]) == ("run", local_line)
        assert f"at {loop}:{local_line - 1}" in server.run(console_lines, "b")  # pdb's own list holds it
        child.ok("setFunctionBreakpoints", breakpoints=[])
        assert f"at {loop}:{local_line - 1}" not in server.run(console_lines, "b")  # cleared by its number


def test_a_rank_without_an_agent_ends_in_the_ide_when_its_process_exits(server: Server) -> None:
    """A worker of another launcher (no agent stream: its `breakpoint()` hooked, beside `meshdbg
    serve`) that continues and exits: its thread exits and the child terminates, as under `run`.
    (Its thread stayed "running" after the program had ended.)"""
    with child_of_one_rank(server, TARGET) as child:
        child.ok("continue", threadId=1)
        child.event("thread", reason="exited", threadId=1, timeout=20)
        child.event("terminated", timeout=10)


def test_a_rank_started_again_gets_the_ides_breakpoints_in_its_new_process(server: Server) -> None:
    """Rank 0's process ends and a new one with the same rank stops: the IDE's breakpoint is set
    in the new process's pdb too (the adapter had kept the old process's as applied)."""
    break_at = line_of(TARGET, "return total")
    adapter, port = start_adapter(server.env)
    try:
        parent = parent_of(server, port)
        first = server.worker(TARGET, 0, "gpus=0")
        child = next_child(parent, port)
        child.event("stopped", threadId=1)
        child.ok("setBreakpoints", source={"path": str(SCRIPTS / TARGET)}, breakpoints=[{"line": break_at}])
        child.ok("continue", threadId=1)
        child.event("stopped", threadId=1, reason="breakpoint")
        child.ok("continue", threadId=1)
        assert first.communicate(timeout=20)[0] == "total=12\n"
        child.event("terminated", timeout=20)  # its process is gone: the child ends

        again = server.worker(TARGET, 0, "gpus=0")  # the same rank, a new process
        later = next_child(parent, port)
        later.event("stopped", threadId=1)
        later.ok("continue", threadId=1)
        later.event("stopped", threadId=1, reason="breakpoint")  # set in the new process before it ran on
        assert later.ok("stackTrace", threadId=1)["stackFrames"][0]["line"] == break_at
        later.ok("disconnect", terminateDebuggee=True)
        assert again.communicate(timeout=20)[0] == "total=12\n"
    finally:
        stop_adapter(adapter)
