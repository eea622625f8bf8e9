"""The worker's side of the program's output in a session (meshdbg.worker.fd_capture): huge
output never blocks, fd 1 and 2 are given back on every way a session ends, and one reader
thread serves a process's stops one after the other.

Real `serve`, real worker processes, the control API; the worker reports on its own stdout
where its descriptors point once the session is over.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from e2e import SCRIPTS, Server, stop_process
from meshdbg.debugger.control import ControlClient

WRITE_TO_FD_1 = "!__import__('os').write(1, b'during\\n')"  # the program's own output, past sys.stdout
RESTORED = "restored and no capture thread\n"  # and one parked reader (tests/scripts/output_restored.py)


def _start(server: Server, megabytes: int, log: Path, **env: str):
    """The worker, its stdout a file (its log: where the output went before the session)."""
    worker = server.worker("output_restored.py", 0, "", str(megabytes), stdout=log.open("w"),
                           env=dict(server.env, **env))
    server.wait_sessions(1)
    return worker


@pytest.mark.timeout(120)
def test_ten_megabytes_printed_during_n_reach_the_session_and_the_log_without_blocking(server: Server,
                                                                                      tmp_path: Path) -> None:
    worker = _start(server, 10, tmp_path / "log")

    async def body(client: ControlClient) -> str:
        async with client.attach(rank=0) as pdb:
            reply = await asyncio.wait_for(pdb.send("n"), 60)
            assert (await pdb.send("c")).ended
        return reply.output

    output = server.run(body)
    assert output.count("x") == 10 * 1024 * 1024  # all of it, ahead of pdb's next position
    assert output.endswith("-> done = time.monotonic() + 5\n")
    worker.wait(timeout=30)
    log = (tmp_path / "log").read_text()
    assert log.count("x") == 10 * 1024 * 1024 and log.endswith(RESTORED)


def test_fds_are_given_back_when_the_server_goes_away_mid_session(server: Server, tmp_path: Path) -> None:
    worker = _start(server, 0, tmp_path / "log", MESHDBG_RECONNECT_S="1")
    server.process.kill()  # the stream breaks; no server answers within the window: it runs on
    worker.wait(timeout=30)
    assert (tmp_path / "log").read_text().endswith(RESTORED)
    stop_process(worker)


def test_a_process_that_exits_with_a_session_open_loses_none_of_its_output(server: Server, tmp_path: Path) -> None:
    worker = server.worker("exit_while_stopped.py", stdin=subprocess.PIPE, stdout=(tmp_path / "log").open("w"))
    server.wait_sessions(1)
    worker.communicate("go\n", timeout=30)
    assert (tmp_path / "log").read_text() == "y" * 200_000 + "\nmain done\n"


def test_the_stops_of_a_process_share_one_reader_thread(server: Server) -> None:
    worker = server.worker("two_stops_one_reader.py")
    for _ in range(2):
        server.wait_sessions(1)
        server.run(lambda client: client.resume("all"))
    out, err = worker.communicate(timeout=30)
    assert out.endswith("one reader for both stops\n"), (out, err)


def _two_stops(server: Server, script: str, *args: str, line: str) -> tuple[str, subprocess.Popen]:
    """`script` stopped twice: `continue` at the first stop, `line` then `continue` at the second."""
    worker = server.worker(script, 0, "", *args)

    async def body(client: ControlClient) -> str:
        async with client.attach(rank=0) as pdb:
            assert (await pdb.send("c")).ended
        await asyncio.to_thread(server.wait_sessions, 1)
        async with client.attach(rank=0, following=True) as pdb:
            output = (await pdb.send(line)).output
            assert (await pdb.send("c")).ended
        return output

    server.wait_sessions(1)
    return server.run(body), worker


def test_a_stop_captures_fd_1_from_where_the_program_sent_it_since_the_last(server: Server, tmp_path: Path) -> None:
    """(the capture is kept between stops: each one saves where fd 1 and 2 go anew)"""
    output, worker = _two_stops(server, "moves_stdout.py", str(tmp_path / "moved"), line=WRITE_TO_FD_1)
    out, _ = worker.communicate(timeout=30)
    assert output == "during\n7\n"  # the program's write, then pdb's echo of its value
    assert (tmp_path / "moved").read_text() == "during\nafter\n" and "during" not in out


def test_a_kept_capture_whose_descriptors_were_closed_and_reused_is_not_used(server: Server) -> None:
    output, worker = _two_stops(server, "kept_capture_closed.py", line=WRITE_TO_FD_1)
    out, err = worker.communicate(timeout=30)
    assert output == "during\n7\n" and out.endswith("during\nafter\n"), (out, err)


def test_a_stop_with_fd_1_closed_goes_on_uncaptured_and_the_capture_serves_a_later_stop(server: Server,
                                                                                      tmp_path: Path) -> None:
    worker = server.worker("closes_stdout.py", 0, "", str(tmp_path / "reopened"))

    async def body(client: ControlClient) -> list[str]:
        outputs = []
        for line in ("p 1", "p 2", WRITE_TO_FD_1):
            await asyncio.to_thread(server.wait_sessions, 1)
            async with client.attach(rank=0, following=True) as pdb:
                outputs.append((await pdb.send(line)).output)
                assert (await pdb.send("c")).ended
        return outputs

    server.wait_sessions(1)
    assert server.run(body) == ["1\n", "2\n", "during\n7\n"]
    _, err = worker.communicate(timeout=30)
    assert (tmp_path / "reopened").read_text() == "during\n"
    assert err.strip().endswith("1 capture reader(s)"), err
