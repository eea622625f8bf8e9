"""Fixtures for the console tests (the harness is console_harness.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from console_harness import Mesh


@pytest.fixture
def mesh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Mesh]:
    """A running server; start workers and consoles through it. Everything stops afterwards."""
    mesh = Mesh(tmp_path, monkeypatch)
    mesh.start_server()
    try:
        yield mesh
    finally:
        mesh.close()


@pytest.fixture
def three_ranks(mesh: Mesh) -> Mesh:
    """Ranks 0-2 stopped at their breakpoint (coords hosts=r//2, gpus=r%2)."""
    for rank in range(3):
        mesh.start_worker(rank)
    mesh.wait_sessions(stopped={0, 1, 2})
    return mesh
