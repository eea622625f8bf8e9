"""A rank that dials the server before the launcher learns its pid is the rank launched.

The fork server forks a rank, then tells the launcher its pid; the rank dials the server by
itself. On a loaded machine the rank can win: its agent stream opens before the launcher
lists it. Here it always wins: the pid reaches the launcher only once the rank's agent
stream has opened. The ranks then wait to be let go, as ranks stopped in pdb would: no
exit of theirs can end the launcher's wait for them.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

import pytest

from meshdbg.debugger.mesh.launcher import MeshLauncher
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.debugger.workers import WorkerRegistry
from meshdbg.host.spawner import ForkServer
from meshdbg.wire.proto import mesh_pb2 as mesh_pb
from meshdbg.wire.racing import within

READY_S = 30.0  # far more than two ranks take to dial in, even on a loaded machine


def pids_told_after_the_ranks_dial_in(registry: WorkerRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hold back each pid the fork server reports until that rank's agent stream has opened."""
    opened: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)  # by pid
    connect, spawn = registry.connect, ForkServer.spawn

    def connect_then_tell(hello: mesh_pb.AgentHello) -> object:
        worker = connect(hello)
        opened[hello.identity.pid].set()
        return worker

    async def spawn_then_wait(self: ForkServer, *args: object, **kwargs: object) -> int:
        pid = await spawn(self, *args, **kwargs)  # type: ignore[arg-type]
        assert await within(READY_S, opened[pid].wait()), f"pid {pid} never opened its agent stream"
        return pid

    monkeypatch.setattr(registry, "connect", connect_then_tell)
    monkeypatch.setattr(ForkServer, "spawn", spawn_then_wait)


async def run_mesh(launcher: MeshLauncher, go: Path) -> int:
    """Start the mesh, wait until it is ready (failing after READY_S), let its ranks go (by
    creating `go`) and wait until it ends."""
    try:
        await launcher.start()
        assert await within(READY_S, launcher.wait_ready()), "the launcher still waits for a rank that connected"
        assert sorted(w.rank for w in launcher.server.workers.workers()) == [0, 1], "a rank is listed twice"
        go.touch()
        return await launcher.wait()
    finally:
        await launcher.close()


def test_a_rank_connected_before_its_pid_is_known_is_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"
    script = tmp_path / "held.py"
    script.write_text(f"import os, time\nwhile not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\n")
    launcher = MeshLauncher(MeshShape.parse("gpus=2"), [str(script)], cwd=str(tmp_path), publish=False)
    pids_told_after_the_ranks_dial_in(launcher.server.workers, monkeypatch)
    assert asyncio.run(run_mesh(launcher, go)) == 0
