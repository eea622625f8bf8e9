"""The actor bench_launcher.py calls: importable by the workers (a module, not __main__)."""

from __future__ import annotations

from meshdbg.worker.mesh import endpoint


class Ping:
    """Answers at once, so a call measures the round trip, not the work."""

    @endpoint
    def ping(self, value: int) -> int:
        return value
