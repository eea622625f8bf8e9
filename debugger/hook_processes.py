"""Worker processes with no agent stream, as their session streams show them.

A worker of another launcher that set only the breakpoint hook (PYTHONBREAKPOINT) has no agent
stream: the server knows it by its sessions alone. Between its stops the process keeps a
session stream parked for its next one (meshdbg.worker.parking), so while one is parked the
server knows it runs; at its exit the process closes them, and a killed one's break. Once the
last of them has ended with the process in pdb nowhere, it has exited. (Such a rank stayed
"running" for good: in the console's counts, in an IDE, to `continue --wait`, and `list --all`
said "no workers" even while it sat stopped.)

No gRPC here: meshdbg.debugger.servicer says when a stream parks and when it stops waiting, and
meshdbg.debugger.workers lists these beside the workers that have an agent stream.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from meshdbg.wire.proto import debugger_pb2 as pb

ProcessKey = tuple[str, int]  # (hostname, pid)
EXITED_KEPT = 4096  # exited processes remembered for `list --all` (the oldest forgotten first)


def process_key(identity: pb.Identity) -> ProcessKey:
    return identity.hostname, identity.pid


@dataclass
class _Parked:
    identity: pb.Identity  # as its last session's hello gave it
    streams: int  # its session streams parked now


class HookProcesses:
    """The processes with no agent stream that run (a session stream parked) or have exited."""

    def __init__(self) -> None:
        self._running: dict[ProcessKey, _Parked] = {}
        self._exited: OrderedDict[ProcessKey, pb.Identity] = OrderedDict()

    def park(self, identity: pb.Identity) -> None:
        """A stream of the process of `identity` waits for its next stop: it runs."""
        key = process_key(identity)
        self._exited.pop(key, None)  # (a pid used again, or a process taken for gone that came back)
        parked = self._running.setdefault(key, _Parked(identity, 0))
        parked.identity = identity
        parked.streams += 1

    def unpark(self, identity: pb.Identity, exited: bool) -> bool:
        """A parked stream of that process stopped waiting: a stop took it, or it ended, with
        the process (`exited`) or not (its end said nothing: the process may run on unseen).
        Whether the process has exited now: that was its last parked stream, and it `exited`."""
        key = process_key(identity)
        parked = self._running.get(key)
        if parked is None:
            return False
        parked.streams -= 1
        if parked.streams > 0:
            return False
        del self._running[key]
        if exited:
            self._exited[key] = parked.identity
            while len(self._exited) > EXITED_KEPT:
                self._exited.popitem(last=False)
        return exited

    def running(self) -> list[pb.Identity]:
        return [parked.identity for parked in self._running.values()]

    def exited(self) -> list[pb.Identity]:
        return list(self._exited.values())
