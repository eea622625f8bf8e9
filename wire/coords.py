"""Mesh coordinates: `hosts=1,gpus=3` as text, as a dict, and as the wire carries them.

Shared by workers (their identity), the launcher (each rank's environment) and every
client that prints or selects ranks.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, TypeVar

from meshdbg.wire.errors import UsageError
from meshdbg.wire.proto import debugger_pb2 as pb


RANK_LIMIT = 2**31  # ranks and coordinates travel as int32
PORT_LIMIT = 2**16  # TCP ports are below this
SECONDS_LIMIT = 1e7  # any timeout or pause a person gives (115 days): far past a job, short of overflows
_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def listening_port(port: int) -> int:
    """`port` if a server can listen on it (0: a free one); else a UsageError. (Python's socket
    layer takes 99999 as 34463, its remainder, and -1 as an error number.)"""
    if not 0 <= port < PORT_LIMIT:
        raise UsageError(f"port {port} is out of range (0-{PORT_LIMIT - 1}; 0 picks a free one)")
    return port


def bounded_int(text: str, limit: int = RANK_LIMIT) -> int | None:
    """`text` as a whole number below `limit` if it is one in ASCII digits, else None.

    Never raises: not on `²` (which str.isdigit accepts and int refuses), nor on a number
    of thousands of digits (which int refuses past 4,300). Every number a person or the wire
    gives meshdbg goes through this or bounded_float before any conversion.
    """
    return _bounded(text, limit, _DIGITS, int)


def bounded_float(text: str, limit: float) -> float | None:
    """`text` as a plain decimal (`5`, `2.5`, `.5`) below `limit`, else None: no sign, exponent,
    `nan` or `inf`, which float() would take and a timeout must not."""
    return _bounded(text, limit, _DECIMAL, float)


_Number = TypeVar("_Number", int, float)


def _bounded(text: str, limit: float, form: re.Pattern[str], convert: Callable[[str], _Number]) -> _Number | None:
    if len(text) > len(str(int(limit))) + 8 or not form.fullmatch(text):
        return None
    value = convert(text)
    return value if value < limit else None


def parse_coords(text: str, what: str = "coordinates",
                 expected: str = "dim=index pairs like hosts=1,gpus=3") -> dict[str, int]:
    """`hosts=1,gpus=3` → {"hosts": 1, "gpus": 3}, in the order given.

    UsageError, naming the text as `what` and saying what was `expected`, for bad syntax or a
    dimension given twice (which would otherwise silently keep the last value).
    """
    coords: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        dim, sep, value = (item.strip() for item in part.partition("="))
        index = bounded_int(value)
        if not sep or not dim.isidentifier() or index is None:
            raise UsageError(f"bad {what} {shown(text)}: expected {expected} (numbers below {RANK_LIMIT})")
        if dim in coords:
            raise UsageError(f"bad {what} {shown(text)}: dimension {dim!r} given twice")
        coords[dim] = index
    return coords


def shown(text: str, limit: int = 80) -> str:
    """`text` quoted for an error message, cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def format_coords(coords: Mapping[str, int]) -> str:
    """{"hosts": 1, "gpus": 3} → `hosts=1,gpus=3`, the inverse of parse_coords."""
    return ",".join(f"{dim}={index}" for dim, index in coords.items())


def identity_coords(identity: pb.Identity) -> dict[str, int]:
    """The mesh coordinates of a wire identity, in mesh order."""
    return {coord.dim: coord.index for coord in identity.coords}


def pb_coords(coords: Mapping[str, int]) -> list[pb.Coord]:
    """Mesh coordinates as a wire identity carries them, the inverse of identity_coords."""
    return [pb.Coord(dim=dim, index=index) for dim, index in coords.items()]
