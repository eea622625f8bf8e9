"""`meshdbg run --on PLACER --bind ADDR --advertise ADDR --wait-hosts S`: where the ranks run.

`local` (the default) forks every rank here; `join` prints the join line and waits for one
`meshdbg host` agent per host (meshdbg.debugger.mesh.remote); `slurm` starts those agents with
srun inside an allocation (meshdbg.debugger.mesh.slurm), `ssh:n1,n2` with ssh (meshdbg.debugger.mesh.ssh).
Unless told where to listen, placers that know their nodes bind where the first node reaches
this host. Binding beyond loopback turns
TLS on (a per-run self-signed certificate, pinned in the join URL) unless a certificate is
given; an advertised loopback address with several hosts is refused (Debian's 127.0.1.1 trap).
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
from typing import Any, NamedTuple

from meshdbg.debugger.mesh.launcher import LocalPlacer, Placer
from meshdbg.debugger.mesh.shape import MeshShape
from meshdbg.debugger.verbs import server_certificate
from meshdbg.host.identity import route_source
from meshdbg.wire.errors import UsageError

PLACERS = "local, join, slurm or ssh:NODE1,NODE2,..."
WAIT_HOSTS_S = 60.0
WILDCARDS = ("0.0.0.0", "::")
ROUTE_PROBE = "192.0.2.1"  # TEST-NET-1: only the routing table is asked, nothing is sent


class On(NamedTuple):
    """A parsed `--on`: the placer's name and, for ssh, its nodes."""

    name: str
    nodes: tuple[str, ...] = ()


def parse_on(text: str) -> On:
    """`local`, `join`, `slurm` or `ssh:n1,n2` (argparse turns the ValueError into exit 2)."""
    name, colon, rest = text.partition(":")
    nodes = tuple(node for node in rest.split(",") if node)
    if (name in ("local", "join", "slurm") and not colon) or (name == "ssh" and nodes):
        return On(name, nodes)
    raise argparse.ArgumentTypeError(f"{text!r}: expected {PLACERS}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("hosts")
    group.add_argument("--on", default=On("local"), type=parse_on, metavar="PLACER",
                       help="where the ranks run: local (this machine), join (one `meshdbg host --join URL` agent "
                            "per host dials in), slurm (inside an allocation, srun starts one agent per node) or "
                            "ssh:NODE1,NODE2 (ssh starts them); the first mesh dimension is the host dimension")
    group.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                       help="the address the run's server listens on (default loopback; beyond it TLS is on)")
    group.add_argument("--advertise", metavar="ADDR", help="the address other hosts dial (default: --bind, or for "
                       "a wildcard bind the source address of this host's route to the first node)")
    group.add_argument("--wait-hosts", type=float, default=WAIT_HOSTS_S, metavar="S",
                       help=f"how long the run waits for every host's agent (default {WAIT_HOSTS_S:g} s)")


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


def advertised(bind: str, advertise: str | None, first_peer: str | None) -> str:
    """The address other hosts dial: --advertise, the bound one, or the source of the route to
    the first peer (the default route's when the peers are not known yet)."""
    if advertise:
        return advertise
    if bind not in WILDCARDS:
        return bind
    peer = first_peer or ROUTE_PROBE
    try:
        return route_source(f"{socket.gethostbyname(peer)}:9")
    except OSError as exc:
        toward = first_peer or "a default gateway"
        raise UsageError(f"--bind {bind} listens everywhere, and this host's address toward {toward} is unknown "
                         f"({exc.strerror or exc}): give --advertise ADDR, the address the other hosts dial") from None


def launcher_options(args: argparse.Namespace, shape: MeshShape) -> dict[str, Any]:
    """MeshLauncher keywords for `args`: placer, bind, advertise and TLS."""
    on: On = args.on
    hosts = 1 if on.name == "local" else shape.dims[0][1]
    nodes = list(on.nodes)
    placer: Placer
    if on.name == "slurm":
        from meshdbg.debugger.mesh.slurm import allocation_nodes

        nodes = allocation_nodes()
    if on.name == "join":
        from meshdbg.debugger.mesh.remote import JoinPlacer

        placer = JoinPlacer(hosts, args.wait_hosts)
    elif on.name == "slurm":
        from meshdbg.debugger.mesh.slurm import SlurmPlacer

        placer = SlurmPlacer(hosts, args.wait_hosts, nodes)
    elif on.name == "ssh":
        from meshdbg.debugger.mesh.ssh import SshPlacer

        placer = SshPlacer(hosts, args.wait_hosts, nodes)
    else:
        placer = LocalPlacer()
    if nodes and is_loopback(args.bind) and not args.advertise:
        args.bind = "0.0.0.0"  # listen where the nodes reach this host
    address = advertised(args.bind, args.advertise, nodes[0] if nodes else None) \
        if on.name != "local" or not is_loopback(args.bind) else None
    if hosts > 1 and address is not None and is_loopback(address):
        raise UsageError(f"{hosts} hosts cannot dial {address}, a loopback address: --bind (or --advertise) "
                         f"an address the other hosts reach")
    if not is_loopback(args.bind) and not args.tls_cert:
        args.tls = True  # beyond loopback: TLS by default
    return dict(placer=placer, bind=args.bind, advertise=address,
                tls=server_certificate(args, address or args.bind))
