"""Ranks of another launcher that set only the breakpoint hook (no agent stream), under
`meshdbg serve`: `list --all` lists each while it is in pdb (it said "no workers"), while it
runs (a session stream parked for its next stop) and once it has exited (its parked streams
closed at its exit, or broken by a kill); watchers hear of that exit (the console's counts,
an IDE, `continue --wait` kept such a rank "running" for good)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import SCRIPTS, Server, line_of, wait_for
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.hook_processes import EXITED_KEPT, HookProcesses
from meshdbg.debugger.views import WorkerView
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import WatchKind

EXIT_S = 15  # for a process's exit to be listed


def listed(server: Server) -> list[tuple[int, str, str]]:
    """(rank, state, exit) of each process `list --all --json` shows."""
    result = server.cli("list", "--all", "--json")
    assert result.returncode == 0, result.stderr
    return [(w["rank"], w["state"], "?" if w["exit_code"] is None else str(w["exit_code"]))
            for w in json.loads(result.stdout)]


def test_a_hook_rank_is_listed_in_pdb_running_and_exited_beside_a_registered_one(server: Server, tmp_path: Path
                                                                                   ) -> None:
    gate = tmp_path / "gate"
    server.worker("stops_again.py", 3, "", "2", "1", str(gate))  # only the hook: no agent stream
    server.worker("hold.py", rank=1, bootstrap=True)  # registered, and in pdb too: listed once
    server.wait_sessions(2)

    result = server.cli("list", "--all", "--json")
    workers = json.loads(result.stdout)
    stop_line = line_of("stops_again.py", "value += 1")
    assert [(w["rank"], w["state"], w["lineno"]) for w in workers] == [(1, "stopped", line_of("hold.py", "print(f")),
                                                                       (3, "stopped", stop_line)]
    hooked = workers[1]
    assert hooked["launcher"] == "" and hooked["exit_code"] is None and hooked["reason"] == "breakpoint"
    assert hooked["pid"] == server.workers[0].pid and workers[0]["launcher"] != ""
    table = server.cli("list", "--all").stdout.splitlines()
    assert [row.split()[:5] for row in table[1:]] == [["1", "worker", "-", "stopped", "-"],
                                                      ["3", "worker", "-", "stopped", "-"]]

    assert server.cli("continue", "3").returncode == 0
    wait_for(lambda: listed(server) == [(1, "stopped", "?"), (3, "running", "?")], EXIT_S, "rank 3 listed running")
    (tmp_path / "gate-1").touch()  # its next stop takes the parked stream
    wait_for(lambda: listed(server) == [(1, "stopped", "?"), (3, "stopped", "?")], EXIT_S, "rank 3 stopped again")

    async def exit_heard(client: ControlClient) -> WorkerView:
        """Continue rank 3 (it then exits) and return the exit watchers hear."""
        changes = client.watch(exits=True)
        async for kind, _, _ in changes:
            if kind is WatchKind.SYNCED:
                break
        await client.resume("3")
        async for kind, view, _ in changes:
            if kind is WatchKind.EXITED and isinstance(view, WorkerView) and view.rank == 3:
                return view
        raise AssertionError("the watch ended before rank 3's exit")

    exited = server.run(lambda client: asyncio.wait_for(exit_heard(client), EXIT_S))
    assert isinstance(exited, WorkerView) and not exited.registered and exited.exit_code is None
    assert server.workers[0].wait(EXIT_S) == 0
    assert listed(server) == [(1, "stopped", "?"), (3, "exited", "?")]
    row = server.cli("list", "--all").stdout.splitlines()[2].split()
    assert row[:5] == ["3", "worker", "-", "exited", "?"]


def test_a_killed_hook_rank_is_listed_exited(server: Server, tmp_path: Path) -> None:
    worker = server.worker("stops_again.py", 2, "", "2", "1", str(tmp_path / "never"))
    server.wait_sessions(1)
    assert server.cli("continue", "2").returncode == 0
    wait_for(lambda: listed(server) == [(2, "running", "?")], EXIT_S, "rank 2 listed running")
    refused = server.cli("interrupt", "2")  # nothing reaches it while it runs: said, not "no rank is running"
    assert refused.returncode == 1 and refused.stderr.startswith("meshdbg: no rank in 2 could be interrupted (rank 2 not "
                                                                 "stopped: it has no agent stream"), refused.stderr
    worker.kill()
    wait_for(lambda: listed(server) == [(2, "exited", "?")], EXIT_S, "rank 2 listed exited")


@pytest.mark.timeout(90)
def test_a_stopped_hook_rank_whose_stream_breaks_runs_until_its_process_is_gone(server: Server, tmp_path: Path
                                                                                  ) -> None:
    """SIGSTOP: the server's keepalive breaks its parked stream, but the process is still
    there: listed running (not exited), and exited once it is killed."""
    worker = server.worker("stops_again.py", 2, "", "2", "1", str(tmp_path / "never"))
    server.wait_sessions(1)
    assert server.cli("continue", "2").returncode == 0
    wait_for(lambda: listed(server) == [(2, "running", "?")], EXIT_S, "rank 2 listed running")
    os.kill(worker.pid, signal.SIGSTOP)
    logs = Path(os.environ["MESHDBG_RUNTIME_DIR"]) / "logs"
    wait_for(lambda: any("a parked session stream ended" in log.read_text() for log in logs.glob("serve-*.log")),
             30, "the server to see the parked stream break")
    assert listed(server) == [(2, "running", "?")]
    worker.kill()
    wait_for(lambda: listed(server) == [(2, "exited", "?")], EXIT_S, "rank 2 listed exited")


def identity(pid: int, host: str = "h1") -> pb.Identity:
    return pb.Identity(rank=pid, pid=pid, hostname=host)


def test_a_process_runs_while_a_stream_is_parked_and_exits_with_its_last() -> None:
    processes = HookProcesses()
    processes.hold(identity(7))
    processes.hold(identity(7))  # two threads' streams
    assert [i.pid for i in processes.running()] == [7]
    assert not processes.release(identity(7), exited=True)  # one is left
    assert processes.release(identity(7), exited=True)
    assert processes.running() == [] and [i.pid for i in processes.exited()] == [7]
    processes.hold(identity(7))  # its pid again, or a process taken for gone that stopped again
    assert processes.exited() == [] and [i.pid for i in processes.running()] == [7]
    assert not processes.release(identity(7), exited=False)  # a stop took it: in pdb, not exited
    assert processes.running() == [] and processes.exited() == []
    assert not processes.release(identity(8), exited=True)  # never parked: nothing known
    processes.hold(identity(7, "h2"))  # the same pid on another host is another process
    assert [(i.hostname, i.pid) for i in processes.running()] == [("h2", 7)]


def test_exited_processes_are_remembered_up_to_a_bound_oldest_forgotten_first() -> None:
    processes = HookProcesses()
    for pid in range(EXITED_KEPT + 2):
        processes.hold(identity(pid))
        processes.release(identity(pid), exited=True)
    pids = [i.pid for i in processes.exited()]
    assert len(pids) == EXITED_KEPT and pids[0] == 2 and pids[-1] == EXITED_KEPT + 1


def test_a_script_attach_follows_a_rank_that_exited_before_it_read_its_next_line(server: Server) -> None:
    """`attach --plain` from a script reads its next line after `c` before it follows the rank;
    a rank whose process ended meanwhile (its exit announced before the attach looked) ends
    the attach, which waited for good."""
    worker = server.worker("hold.py", rank=4)  # stops once, then exits
    server.wait_sessions(1)
    attach = subprocess.Popen([sys.executable, "-m", "meshdbg", "attach", "--plain", "4"], env=server.env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert attach.stdin is not None
        attach.stdin.write("c\n")
        attach.stdin.flush()
        assert worker.wait(EXIT_S) == 0
        wait_for(lambda: (4, "exited", "?") in listed(server), EXIT_S, "rank 4's exit known to the server")
        out, err = attach.communicate("p 1\n", timeout=EXIT_S)
    finally:
        if attach.poll() is None:
            attach.kill()
    assert attach.returncode == 0, err
    assert "rank 4 continued; waiting for its next stop" in out and "rank 4 exited; nothing more to attach to" in out


def test_a_hook_rank_whose_stream_was_not_parked_is_held_running_by_its_pid_on_this_host(server: Server,
                                                                                        tmp_path: Path) -> None:
    """A process that parks no stream (here: none allowed; in a job, past the limits of what a
    process or a server keeps) is still known to run, and to have exited, on the server's host."""
    gate = tmp_path / "gate"
    script = ("import runpy, sys; from meshdbg.worker import parking; parking.PARKED_LIMIT = 0; "
              "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")
    worker = subprocess.Popen([sys.executable, "-c", script, str(SCRIPTS / "stops_again.py"), "2", "1", str(gate)],
                              env=dict(server.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook",
                                       MESHDBG_RANK="5"),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server.workers.append(worker)
    server.wait_sessions(1)
    assert server.cli("continue", "5").returncode == 0
    wait_for(lambda: listed(server) == [(5, "running", "?")], EXIT_S, "rank 5 listed running")
    (tmp_path / "gate-1").touch()
    wait_for(lambda: listed(server) == [(5, "stopped", "?")], EXIT_S, "rank 5 stopped again")
    assert server.cli("continue", "5").returncode == 0
    _, err = worker.communicate(timeout=EXIT_S)
    assert worker.returncode == 0 and err.count("parked:\n") == 2, err  # after each stop, no stream parked
    wait_for(lambda: listed(server) == [(5, "exited", "?")], EXIT_S, "rank 5 listed exited")


def test_the_children_of_a_registered_rank_end_before_it_without_ending_the_rank(server: Server) -> None:
    """A pool's children (each that rank too, with only the hook) stop, continue and end while
    their parent, the registered rank, lives: listed exited, but watchers hear of one end of
    rank 0, its own (else the console, an IDE and `serve` had said "rank 0 exited" as its pool
    closed, while it ran on)."""
    async def exits_heard(client: ControlClient) -> list[WorkerView]:
        changes = client.watch(exits=True)
        async for kind, _, _ in changes:
            if kind is WatchKind.SYNCED:
                break
        parent = server.worker("pool_children.py", 0, bootstrap=True)
        await asyncio.to_thread(server.wait_sessions, 2)
        await client.resume("all")
        heard = []
        async for kind, view, _ in changes:
            if kind is WatchKind.EXITED and isinstance(view, WorkerView):
                heard.append(view)
                if view.pid == parent.pid:
                    return heard
        raise AssertionError("the watch ended before the parent's exit")

    heard = server.run(lambda client: asyncio.wait_for(exits_heard(client), 30))
    assert isinstance(heard, list) and [(view.pid, view.registered) for view in heard] == [(server.workers[0].pid, True)]
    processes = json.loads(server.cli("list", "--all", "--json").stdout)
    assert sorted((w["launcher"] != "", w["state"]) for w in processes) == [(False, "exited"), (False, "exited"),
                                                                           (True, "exited")]
