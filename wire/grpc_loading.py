"""gRPC's own variables, set for its core to read as it loads, and only then.

Both sides load gRPC so: the `meshdbg` command (meshdbg.debugger.grpc_engine: quiet, on the
classic pollers) and the worker side (meshdbg.worker.dependencies: no INFO lines). A variable is
set only while gRPC loads and removed at once, so the programs the process starts later (the
ranks of `meshdbg run`, a rank's own children) see the environment the user gave; one the user
set is left as it is.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, Mapping

VERBOSITY = "GRPC_VERBOSITY"


def verbosity_unless_set(level: str) -> dict[str, str]:
    """GRPC_VERBOSITY=`level`, unless the user set the variable (even empty)."""
    return {} if VERBOSITY in os.environ else {VERBOSITY: level}


@contextlib.contextmanager
def set_while_loading(settings: Mapping[str, str]) -> Iterator[None]:
    """`settings` in the environment inside only (gRPC's core reads them as it loads)."""
    os.environ.update(settings)
    try:
        yield
    finally:
        for name in settings:
            os.environ.pop(name, None)
