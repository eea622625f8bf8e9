"""A scripted tour of meshdbg: four workers on a 2x2 mesh stop at breakpoint(); we list them,
cast a pdb command to a selection, step one rank, and continue everyone.

Run: python examples/demo.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.format import grouped_cast_output, session_table
from meshdbg.debugger.service import DebugClient

WORKER = Path(__file__).with_name("toy_worker.py")
MESH = {"hosts": 2, "gpus": 2}


def show(title: str, text: str) -> None:
    print(f"\n$ {title}\n{text}", flush=True)


async def wait_stopped(client: ControlClient, count: int, timeout: float = 30) -> None:
    async def poll() -> None:
        while sum(s.state == "stopped" for s in await client.list()) < count:
            await asyncio.sleep(0.05)
    await asyncio.wait_for(poll(), timeout)


async def tour() -> int:
    server = DebugClient(port=0, publish=False)
    connection = await server.start()
    env = dict(os.environ, MESHDBG_ADDR=connection.addr, MESHDBG_TOKEN=connection.token,
               PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
    workers = []
    for rank in range(MESH["hosts"] * MESH["gpus"]):
        coords = f"hosts={rank // MESH['gpus']},gpus={rank % MESH['gpus']}"
        workers.append(subprocess.Popen([sys.executable, str(WORKER)],
                                        env=dict(env, MESHDBG_RANK=str(rank), MESHDBG_COORDS=coords),
                                        stdout=subprocess.PIPE, text=True))
    try:
        os.environ.update(MESHDBG_ADDR=connection.addr, MESHDBG_TOKEN=connection.token)
        async with await ControlClient.connect() as client:
            await wait_stopped(client, len(workers))
            show("meshdbg list", session_table(await client.list()))
            show("meshdbg cast 'ranks(hosts=1)' 'p loss'", grouped_cast_output(await client.cast("ranks(hosts=1)", "p loss")))
            show("meshdbg cast all 'p weights[1]'", grouped_cast_output(await client.cast("all", "p weights[1]")))
            async with client.attach(rank=1) as pdb:
                for line in ("n", "p loss * 2", "w"):
                    reply = await pdb.send(line)
                    show(f"(Pdb r1) {line}", reply.output.rstrip())
            show("meshdbg continue", f"resumed {len(await client.resume())} sessions")
            await wait_stopped(client, len(workers))  # the second step stops again
            show("meshdbg continue", f"resumed {len(await client.resume())} sessions")
        outputs = [(await asyncio.to_thread(w.communicate, None, 30))[0] for w in workers]
        codes = [w.returncode for w in workers]
        show("worker output", "".join(outputs) + f"workers exited with {codes}")
        return 0 if all(code == 0 for code in codes) else 1
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        await server.stop()


if __name__ == "__main__":
    sys.exit(asyncio.run(tour()))
