"""Fixtures shared by every test folder; the helpers behind them live in e2e.py."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from e2e import Server, start_server, stop_process


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = start_server(tmp_path)
    try:
        yield srv
    finally:
        for worker in srv.workers:
            stop_process(worker)
        srv.process.terminate()
        srv.process.communicate(timeout=10)
