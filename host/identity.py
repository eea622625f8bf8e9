"""Who a host agent is, as it tells the central `run`: name, address, index hint, versions.

The address is the source address of this host's route to the server (what the server's
peers would dial back), never a loopback one; the index hint comes from the engine that
placed the agent (`--index`, then SLURM_NODEID, GROUP_RANK, JOB_COMPLETION_INDEX).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import socket

from meshdbg.wire.connection import PROTOCOL_VERSION
from meshdbg.wire.proto import host_pb2 as host_pb
from meshdbg.wire.tls import split_addr

INDEX_VARIABLES = ("SLURM_NODEID", "GROUP_RANK", "JOB_COMPLETION_INDEX")


def index_hint(given: int | None, env: dict[str, str] | os._Environ = os.environ) -> int | None:
    """`--index`, else the first index variable a placer set (an unparsable one is ignored)."""
    if given is not None:
        return given
    for name in INDEX_VARIABLES:
        value = env.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def route_source(addr: str) -> str:
    """The local address this host reaches `addr` from (no packet is sent)."""
    host, port = split_addr(addr)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((host, port))
        return probe.getsockname()[0]


def meshdbg_version() -> str:
    try:
        return importlib.metadata.version("meshdbg")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def hello(addr: str, index: int | None, master_port: int) -> host_pb.HostHello:
    """This host's hello to the server at `addr`."""
    return host_pb.HostHello(hostname=socket.gethostname(), addresses=[route_source(addr)], index_hint=index,
                             meshdbg_version=meshdbg_version(), python_version=platform.python_version(),
                             protocol_version=PROTOCOL_VERSION, master_port=master_port)


def script_digest(argv: list[str], cwd: str) -> str:
    """`sha256:<hex>` of the script `argv` runs, as this host has it; "" for a module or no file."""
    if not argv or argv[0] == "-m":
        return ""
    path = os.path.join(cwd, argv[0])
    try:
        with open(path, "rb") as script:
            return "sha256:" + hashlib.file_digest(script, "sha256").hexdigest()
    except OSError:
        return ""
