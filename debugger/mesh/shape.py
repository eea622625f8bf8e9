"""Mesh shapes: named dimensions, row-major ranks, and the environment each rank gets.

A shape like `hosts=2,gpus=4` has 8 ranks numbered row-major (the last dimension fastest):
rank 3 is `hosts=0,gpus=3`, rank 4 is `hosts=1,gpus=0`. Pure logic, no processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from meshdbg.wire.errors import UsageError
from meshdbg.wire.coords import format_coords, parse_coords
from meshdbg.wire.environment import (ADDR, BREAKPOINTS_OFF, COORDS, NAME, PYTHONBREAKPOINT, RANK, TLS_FINGERPRINT,
                                      TOKEN)

DEFAULT_SHAPE = {"procs": 1}
CoordSpec = int | slice | range | Iterable[int]


@dataclass(frozen=True)
class MeshShape:
    """Named dimensions and their sizes, in order."""

    dims: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, sizes: Mapping[str, int]) -> "MeshShape":
        """A shape from {dim: size}; UsageError for a bad name or a size below 1."""
        if not sizes:
            raise UsageError("a mesh needs at least one dimension, e.g. hosts=2,gpus=4")
        for dim, size in sizes.items():
            if not dim.isidentifier():
                raise UsageError(f"bad mesh dimension name {dim!r}: use a plain name like hosts or gpus")
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise UsageError(f"bad mesh size {dim}={size!r}: expected a whole number of at least 1")
        return cls(tuple(sizes.items()))

    @classmethod
    def parse(cls, text: str) -> "MeshShape":
        """`hosts=2,gpus=4` → a shape; UsageError saying what is wrong otherwise."""
        return cls.of(parse_coords(text, "--mesh", "dim=size pairs like hosts=2,gpus=4"))

    @property
    def size(self) -> int:
        total = 1
        for _, extent in self.dims:
            total *= extent
        return total

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dim for dim, _ in self.dims)

    def coords(self, rank: int) -> dict[str, int]:
        """The coordinates of `rank`, row-major (last dimension fastest)."""
        if not 0 <= rank < self.size:
            raise UsageError(f"rank {rank} is outside a mesh of {self.size} ranks")
        coords: dict[str, int] = {}
        for dim, extent in reversed(self.dims):
            rank, coords[dim] = divmod(rank, extent)
        return {dim: coords[dim] for dim in self.names}

    def ranks(self, **where: CoordSpec) -> list[int]:
        """Ranks whose coordinates match: an index, a slice/range, or a collection per dimension."""
        unknown = sorted(set(where) - set(self.names))
        if unknown:
            raise UsageError(f"unknown mesh dimension {', '.join(unknown)} (the mesh has {', '.join(self.names)})")
        wanted = {dim: _indices(spec, dict(self.dims)[dim]) for dim, spec in where.items()}
        return [rank for rank in range(self.size)
                if all(self.coords(rank)[dim] in indices for dim, indices in wanted.items())]

    def __str__(self) -> str:
        return format_coords(dict(self.dims))


def _indices(spec: CoordSpec, extent: int) -> set[int]:
    if isinstance(spec, int):
        return {spec}
    if isinstance(spec, slice):
        return set(range(extent)[spec])
    return set(spec)


def rank_env(shape: MeshShape, rank: int, *, name: str, addr: str, token: str, master_addr: str,
             master_port: int, fingerprint: str = "", breakpoints: bool = True) -> dict[str, str]:
    """The variables a rank gets: MESHDBG_* for meshdbg (with the server's TLS fingerprint when
    it has one), and torch.distributed's own; without `breakpoints` (the run's own
    PYTHONBREAKPOINT=0), PYTHONBREAKPOINT=0 too, so that breakpoint() does nothing, as Python's."""
    coords = shape.coords(rank)
    local_size = shape.dims[-1][1]
    return {
        ADDR.name: addr, TOKEN.name: token, RANK.name: str(rank), COORDS.name: format_coords(coords), NAME.name: name,
        "RANK": str(rank), "WORLD_SIZE": str(shape.size), "LOCAL_RANK": str(rank % local_size),
        "LOCAL_WORLD_SIZE": str(local_size), "GROUP_RANK": str(rank // local_size),
        "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
        PYTHONBREAKPOINT: "meshdbg.worker.remote_breakpointhook" if breakpoints else BREAKPOINTS_OFF,
        **({TLS_FINGERPRINT.name: fingerprint} if fingerprint else {}),
    }
