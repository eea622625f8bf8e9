"""Actor classes for the mesh tests (importable by the workers: a module, not __main__)."""

from __future__ import annotations

import os

from meshdbg.worker.mesh import endpoint


class Echo:
    """Answers with its rank, coordinates and arguments."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    @endpoint
    def who(self, value: object = None) -> dict:
        return {"tag": self.tag, "rank": int(os.environ["RANK"]), "coords": os.environ["MESHDBG_COORDS"],
                "pid": os.getpid(), "value": value}

    @endpoint
    def fail_on(self, rank: int) -> int:
        if int(os.environ["RANK"]) == rank:
            raise ValueError(f"rank {rank} refuses")
        return 0

    def private(self) -> None:
        """Not an endpoint: the driver may not call it."""
