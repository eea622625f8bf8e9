"""`run_console` in-process with injected input and output: the entry point `meshdbg run` uses."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from console_harness import WAIT_S, WORKER_SCRIPT
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from meshdbg.debugger.console import run_console
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.service import DebugClient
from watching import watch_until


def test_console_returns_when_idle_and_reports_attached_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHDBG_HISTORY", str(tmp_path / "history"))
    monkeypatch.setenv("NO_COLOR", "1")
    screen = io.StringIO()

    async def scenario() -> int:
        server = DebugClient(publish=False)
        connection = await server.start()
        monkeypatch.setenv("MESHDBG_ADDR", connection.addr)
        monkeypatch.setenv("MESHDBG_TOKEN", connection.token)
        worker = subprocess.Popen([sys.executable, str(WORKER_SCRIPT)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={**os.environ, "MESHDBG_RANK": "4", "MESHDBG_COORDS": "hosts=2,gpus=0",
                                       "PYTHONBREAKPOINT": "meshdbg.worker.remote_breakpointhook"})
        try:
            async with ControlClient(connection) as client:
                await watch_until(client, {"stopped": [4]})
                with create_pipe_input() as keys:
                    keys.send_text("p loss_scale\rc\r")
                    output = Vt100_Output(screen, lambda: Size(rows=40, columns=120), term="xterm")
                    return await asyncio.wait_for(run_console(client, attach_rank=4, exit_when_idle=True,
                                                              input=keys, output=output), WAIT_S)
        finally:
            worker.kill()
            worker.wait()
            await server.stop()

    assert asyncio.run(scenario()) == 0
    text = screen.getvalue()
    assert "attached to rank 4 (hosts=2,gpus=0)" in text
    assert "2.5" in text
    assert "rank 4 (hosts=2,gpus=0) continued" in text
