"""A `breakpoint()` in a non-daemon thread after the main thread has finished the script stops
like any other on every Python (3.12 starts no thread once the interpreter finalizes: the
worker's bootstrap waits for such threads before it lets the interpreter finalize)."""

from __future__ import annotations

from e2e import Server, stop_process
from meshdbg.debugger.control import ControlClient
from parity import bootstrap_worker


def test_a_breakpoint_in_a_thread_after_the_main_thread_finished_stops(server: Server) -> None:
    worker = bootstrap_worker(server, "late_thread.py")
    try:
        server.wait_sessions(1)

        async def body(client: ControlClient) -> str:
            (session,) = await client.list()
            assert session.thread == "late"
            async with client.attach(rank=0) as pdb:
                assert (await pdb.send("p x")).output == "1\n"
                await pdb.send("!x = 5")
                return (await pdb.send("c")).output

        server.run(body)
        _, err = worker.communicate(timeout=20)
        assert worker.returncode == 0 and "after 5" in err and "cannot open" not in err, err
    finally:
        stop_process(worker)
