"""`meshdbg run --dap PORT`: the job's own server served to an IDE; ranks that exit end the child."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading

import pytest

from e2e import SCRIPTS, line_of
from ide import Ide, attach

MB = 1 << 20
RANK_0, RANK_1 = "rank 0 (gpus=0)", "rank 1 (gpus=1)"  # as the child names its threads


def start_job(tmp_path, *args: str, stdout=subprocess.PIPE) -> tuple[subprocess.Popen, int, str]:
    """`meshdbg run --dap 0 --mesh gpus=2 ARGS`: the process, the adapter's port and the token it printed."""
    job = subprocess.Popen([sys.executable, "-m", "meshdbg", "run", "--dap", "0", "--mesh", "gpus=2", *args],
                           stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        lines = iter(job.stderr.readline, "")
        listening = next(line for line in lines if line.startswith("meshdbg dap: listening on 127.0.0.1:"))
        port = int(listening.strip().rsplit(":", 1)[1])
        configuration = "".join(next(lines) for _ in range(11))  # the launch.json snippet that follows
        assert '"type": "debugpy"' in configuration and f'"port": {port}' in configuration
    except BaseException:  # (pytest-timeout's too): the job is not left running
        job.kill()
        job.communicate(timeout=10)
        raise
    return job, port, configuration.split('"token": "')[1].split('"')[0]


def beats(ide: Ide, category: str, rank: str, word: str) -> None:
    """The IDE hears `rank`'s `word` lines of ide_printing.py as they come: the first it gets,
    then the one two beats on. (Whichever beat comes first: the ranks print from their start,
    and an IDE hears what is written once it is attached, on a loaded machine after beat 3.)"""
    first = ide.wait(lambda m: m.get("event") == "output" and m["body"]["category"] == category
                     and m["body"]["output"].startswith(f"{rank}: {word} "), f"{rank}'s {word} lines")
    beat = int(first["body"]["output"].split()[-1])
    ide.event("output", category=category, output=f"{rank}: {word} {beat + 2}\n")


def stops_told(job: subprocess.Popen, count: int) -> None:
    """Read the job's stderr until it has told of `count` stops (`meshdbg: rank 1 (gpus=1)
    stopped at ...`). A parent that attaches after them is asked for one child for the ranks
    stopped at the same place; one attached before, a child per rank when they stop more than
    GROUP_SETTLE_S apart, as the ranks of a loaded machine can."""
    told = 0
    while told < count:
        line = job.stderr.readline()
        assert line, f"the job's stderr ended after {told} of {count} stops"
        told += " stopped at " in line


def stopped_child(job: subprocess.Popen, port: int, token: str) -> tuple[Ide, Ide]:
    """Once both ranks of `job` stopped: a parent attached, and the child it was asked to open,
    told of both stops."""
    stops_told(job, 2)
    parent = Ide(port)
    attach(parent, {"meshdbg": {"token": token}})
    child = Ide(port)
    attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
    for thread in (1, 2):
        child.event("stopped", threadId=thread)
    return parent, child


def outputs(ide: Ide, category: str) -> str:
    """The text of every `output` event of `category` the IDE got so far."""
    return "".join(m["body"]["output"] for m in ide.seen
                   if m["type"] == "event" and m["event"] == "output" and m["body"].get("category") == category)


def heard(ide: Ide, category: str, text: str) -> None:
    """Wait until an `output` event of `category` has had `text` in it."""
    if text not in outputs(ide, category):
        ide.wait(lambda m: m["type"] == "event" and m["event"] == "output" and m["body"].get("category") == category
                 and text in m["body"]["output"], f"{category} output with {text!r}")


def test_run_with_dap_serves_the_job_and_its_end_terminates_the_child(tmp_path) -> None:
    shutil.copy(SCRIPTS / "ide_target.py", tmp_path)
    job, port, token = start_job(tmp_path, "ide_target.py")  # as typed in its folder: a relative path
    try:
        parent, child = stopped_child(job, port, token)
        assert [t["name"] for t in child.ok("threads")["threads"]] == [RANK_0, RANK_1]
        frame = child.ok("stackTrace", threadId=1)["stackFrames"][0]  # a path the IDE can open: absolute
        assert frame["source"]["path"] == str(tmp_path / "ide_target.py")  # (it was "ide_target.py")
        child.ok("continue", threadId=1)
        child.event("exited", timeout=20)
        child.event("terminated")
        assert job.wait(timeout=30) == 0
    finally:
        job.kill()
        job.communicate(timeout=10)


@pytest.mark.timeout(90)
def test_what_ranks_print_while_running_reaches_the_ide_once(tmp_path) -> None:
    """Output events with each rank's lines as it runs: to the parent before the ranks stop, to
    their child after; a line pdb's reply already brought (printed by a step) is not sent again."""
    flag = tmp_path / "stop now"
    job, port, token = start_job(tmp_path, str(SCRIPTS / "ide_printing.py"), str(flag))
    try:
        parent = Ide(port)
        attach(parent, {"meshdbg": {"token": token}})
        beats(parent, "stdout", RANK_0, "working")
        beats(parent, "stderr", RANK_1, "warning")
        flag.touch()
        child = Ide(port)
        attach(child, parent.reverse_request("startDebugging")["arguments"]["configuration"])
        for thread in (1, 2):
            child.event("stopped", threadId=thread)
        child.ok("next", threadId=1, singleThread=True)
        child.event("stopped", threadId=1, reason="step")
        heard(child, "console", "after the stop")  # in pdb's reply to the step
        child.ok("continue", threadId=1)
        child.event("terminated", timeout=20)
        assert job.wait(timeout=30) == 0
        assert parent.closed() and child.closed()  # every event the adapter sent is in `seen` now
        printed = outputs(child, "stdout") + outputs(parent, "stdout")  # (a rank's last lines may trail its end)
        assert f"{RANK_0}: done\n" in printed and f"{RANK_1}: done\n" in printed
        assert f"{RANK_1}: after the stop\n" in printed  # printed once continued: its session had closed
        assert f"{RANK_0}: after the stop" not in printed  # printed by the step: pdb's reply brought it
    finally:
        job.kill()
        job.communicate(timeout=10)


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


@pytest.mark.timeout(90)
def test_a_flood_to_an_ide_that_does_not_read_is_dropped_not_kept(tmp_path) -> None:
    """A rank writes 64 MB while the IDE reads nothing: the run (launcher and adapter) does not
    keep it; once the IDE reads again it hears that lines were dropped and how many, and the
    ranks' output goes on."""
    flood = tmp_path / "flood now"
    job, port, token = start_job(tmp_path, str(SCRIPTS / "ide_printing.py"), str(tmp_path / "never"), str(flood),
                                 stdout=subprocess.DEVNULL)
    flooded = threading.Event()
    threading.Thread(target=lambda: [flooded.set() for line in job.stderr if "flood over" in line],
                     daemon=True).start()  # (and keeps the job's stderr flowing)
    try:
        parent = Ide(port)
        attach(parent, {"meshdbg": {"token": token}})
        beats(parent, "stdout", RANK_0, "working")
        parent.reading.clear()
        before = rss_bytes(job.pid)
        flood.touch()
        assert flooded.wait(60), "rank 0 did not finish its flood"
        grown = rss_bytes(job.pid) - before
        assert grown < 24 * MB, f"the run grew by {grown / MB:.0f} MB while a rank wrote 64 MB"
        parent.reading.set()
        heard(parent, "console", "their output is dropped here until it catches up")
        heard(parent, "console", "lines of the ranks' output dropped")
        parent.wait(lambda m: m.get("event") == "output" and "working" in m["body"]["output"], "output after the notice")
    finally:
        job.terminate()
        job.wait(timeout=30)


@pytest.mark.timeout(90)
def test_a_logpoint_prints_on_every_rank_to_the_ide_without_a_stop(tmp_path) -> None:
    """A logpoint (DAP's logMessage) set in the child: each rank prints its line at every hit,
    as the rank's output the IDE hears, named by rank, and no rank stops there."""
    job, port, token = start_job(tmp_path, str(SCRIPTS / "ide_loop.py"))
    try:
        parent, child = stopped_child(job, port, token)
        total = line_of("ide_loop.py", "total += square")
        placed = child.ok("setBreakpoints", source={"path": str(SCRIPTS / "ide_loop.py")},
                          breakpoints=[{"line": total, "logMessage": "hit {i}: {square}", "condition": "i >= 38"}])
        assert [(b["verified"], b["line"]) for b in placed["breakpoints"]] == [(True, total)]
        child.ok("continue", threadId=1)
        child.event("terminated", timeout=30)
        assert job.wait(timeout=30) == 0
        assert child.closed() and parent.closed()
        printed = outputs(child, "stdout") + outputs(parent, "stdout")
        for rank in (RANK_0, RANK_1):
            assert f"{rank}: hit 38: 1444\n" in printed and f"{rank}: hit 39: 1521\n" in printed
            assert f"{rank}: hit 37" not in printed
        assert len([m for m in child.seen if m.get("event") == "stopped"]) == 2  # the ranks' first stops only
    finally:
        job.kill()
        job.communicate(timeout=10)
