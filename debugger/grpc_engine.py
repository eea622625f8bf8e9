"""How the `meshdbg` command's own processes load gRPC: quiet, and on its classic pollers (issue 22).

gRPC 1.85's default engine (EventEngine) reads every socket on threads of its own, which then
hand each message to the thread that waits for it: for `meshdbg serve` and `meshdbg run`,
grpc.aio's poller. Its classic pollers (iomgr, the engine before EventEngine, still shipped and
selectable with GRPC_EXPERIMENTS) do that read in the polling thread itself. Measured (README,
"Speed"), an attached `p x` through a server so started takes 9-14 % less time and 75-115 us
less of the server's CPU.

Only processes the `meshdbg` command runs are changed: never a worker (the user's program,
whose own gRPC must behave as without meshdbg) nor a script using meshdbg's Python API. The
variable is set only while gRPC loads (its core reads it then) and removed at once, so the
programs such a process starts (`meshdbg run`'s workers) see the environment the user gave;
so is GRPC_VERBOSITY=NONE, which keeps gRPC's own log lines out of the command's terminal.
The pollers are left alone when the user set GRPC_EXPERIMENTS (even empty: the way to opt
out), when gRPC is already loaded, and with a gRPC other than the versions measured: gRPC
prints an error for every experiment name it does not know, which a later version may drop.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

from meshdbg.wire.grpc_loading import VERBOSITY, set_while_loading, verbosity_unless_set

VARIABLE = "GRPC_EXPERIMENTS"
CLASSIC_POLLERS = "-event_engine_listener,-event_engine_client"  # servers' and channels' sockets
MEASURED_VERSIONS = ("1.85.",)  # the grpcio releases these experiments were measured on


def installed_grpc_version() -> str | None:
    """The installed grpcio's version, read without loading gRPC (its core starts on import)."""
    spec = importlib.util.find_spec("grpc")
    if spec is None or spec.origin is None:
        return None
    try:
        text = (Path(spec.origin).parent / "_grpcio_metadata.py").read_text()
    except OSError:
        return None
    found = re.search(r'__version__\s*=\s*"""([^"]+)"""', text)
    return found.group(1) if found else None


def classic_pollers() -> str | None:
    """The GRPC_EXPERIMENTS value that selects the classic pollers, or None: the user set the
    variable, or the installed gRPC is not one of the versions measured."""
    if VARIABLE in os.environ:
        return None
    version = installed_grpc_version()
    return CLASSIC_POLLERS if version is not None and version.startswith(MEASURED_VERSIONS) else None


def load_grpc() -> None:
    """Load gRPC for this process: on its classic pollers where `classic_pollers` gives them,
    and with its C-core's log lines off unless the user set GRPC_VERBOSITY (our errors say what
    went wrong in one line; GRPC_VERBOSITY=ERROR brings gRPC's back). Both variables are read
    as gRPC loads, and set only meanwhile. A gRPC already loaded is left as it is."""
    if "grpc" in sys.modules:
        return
    settings = verbosity_unless_set("NONE")
    experiments = classic_pollers()
    if experiments is not None:
        settings[VARIABLE] = experiments
    with set_while_loading(settings):
        import grpc  # noqa: F401  (its core reads the variables as it loads)
