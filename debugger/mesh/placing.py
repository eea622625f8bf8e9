"""`meshdbg run --on PLACER --bind ADDR --advertise ADDR --wait-hosts S`: where the ranks run.

`local` (the default) forks every rank here; `join` prints the join line and waits for one
`meshdbg host` agent per host (meshdbg.debugger.mesh.remote); `slurm` starts those agents with
srun inside an allocation (meshdbg.debugger.mesh.slurm). Binding beyond loopback turns
TLS on (a per-run self-signed certificate, pinned in the join URL) unless a certificate is
given; an advertised loopback address with several hosts is refused (Debian's 127.0.1.1 trap).
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
from typing import Any

from meshdbg.debugger.mesh.launcher import LocalPlacer
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.debugger.verbs import server_certificate
from meshdbg.wire.errors import UsageError

PLACERS = ("local", "join", "slurm")
WAIT_HOSTS_S = 60.0
WILDCARDS = ("0.0.0.0", "::")
ROUTE_PROBE = "192.0.2.1"  # TEST-NET-1: only the routing table is asked, nothing is sent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("hosts")
    group.add_argument("--on", default="local", choices=PLACERS, help="where the ranks run: local (this machine), "
                       "join (one `meshdbg host --join URL` agent per host dials in) or slurm (inside an allocation, "
                       "srun starts one agent per node); the first mesh dimension is the host dimension")
    group.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                       help="the address the run's server listens on (default loopback; beyond it TLS is on)")
    group.add_argument("--advertise", metavar="ADDR", help="the address other hosts dial (default: --bind, or for "
                       "a wildcard bind the source address of this host's default route)")
    group.add_argument("--wait-hosts", type=float, default=WAIT_HOSTS_S, metavar="S",
                       help=f"how long --on join waits for every host (default {WAIT_HOSTS_S:g} s)")


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def advertised(bind: str, advertise: str | None) -> str:
    """The address other hosts dial: --advertise, the bound one, or the default route's source."""
    if advertise:
        return advertise
    if bind not in WILDCARDS:
        return bind
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((ROUTE_PROBE, 9))
            return probe.getsockname()[0]
    except OSError:
        raise UsageError(f"--bind {bind} listens everywhere, but this host has no default route to tell which "
                         f"address the other hosts dial: give --advertise ADDR") from None


def launcher_options(args: argparse.Namespace, shape: MeshShape) -> dict[str, Any]:
    """MeshLauncher keywords for `args`: placer, bind, advertise and TLS."""
    hosts = 1 if args.on == "local" else shape.dims[0][1]
    nodes: list[str] = []
    if args.on == "slurm":
        from meshdbg.debugger.mesh.slurm import advertised_to, allocation_nodes

        nodes = allocation_nodes()
        if is_loopback(args.bind) and not args.advertise:  # listen where the nodes reach this host
            args.bind, args.advertise = "0.0.0.0", advertised_to(nodes)
    address = advertised(args.bind, args.advertise) if args.on != "local" or not is_loopback(args.bind) else None
    if hosts > 1 and is_loopback(address):
        raise UsageError(f"{hosts} hosts cannot dial {address}, a loopback address: --bind (or --advertise) "
                         f"an address the other hosts reach")
    if args.on == "join":
        from meshdbg.debugger.mesh.remote import JoinPlacer

        placer = JoinPlacer(hosts, args.wait_hosts)
    elif args.on == "slurm":
        from meshdbg.debugger.mesh.slurm import SlurmPlacer

        placer = SlurmPlacer(hosts, args.wait_hosts, nodes)
    else:
        placer = LocalPlacer()
    if not is_loopback(args.bind) and not args.tls_cert:
        args.tls = True  # beyond loopback: TLS by default
    return dict(placer=placer, bind=args.bind, advertise=address,
                tls=server_certificate(args, address or args.bind))
