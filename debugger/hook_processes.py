"""Worker processes with no agent stream, as their session streams show them.

A worker of another launcher that set only the breakpoint hook (PYTHONBREAKPOINT) has no agent
stream: the server knows it by its sessions alone. Between its stops the process keeps a
session stream parked for its next one (meshdbg.worker.parking), so while one is parked the
server knows it runs; at its exit the process closes them, and a killed one's break. On the
server's host, a process whose stream was not parked (no room) is held by a watch of its pid
instead. Once the last of what holds it is gone, with the process in pdb nowhere, it has
exited. (Such a rank stayed "running" for good: in the console's counts, in an IDE, to a
client following it after `c`; and `list --all` said "no workers" even while it sat stopped.)

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
class _Held:
    identity: pb.Identity  # as its last session's hello gave it
    holds: int  # its session streams parked now, and the watch of its pid
    watched: bool = False  # its pid is watched (one watch a process, however many threads)


class HookProcesses:
    """The processes with no agent stream that run (held: a session stream parked, or a watch
    of the pid) or have exited."""

    def __init__(self) -> None:
        self._running: dict[ProcessKey, _Held] = {}
        self._exited: OrderedDict[ProcessKey, pb.Identity] = OrderedDict()

    def hold(self, identity: pb.Identity) -> None:
        """A stream of the process of `identity` waits for its next stop, or its pid is watched:
        it runs."""
        key = process_key(identity)
        self._exited.pop(key, None)  # (a pid used again, or a process taken for gone that came back)
        held = self._running.setdefault(key, _Held(identity, 0))
        held.identity = identity
        held.holds += 1

    def watch(self, identity: pb.Identity) -> bool:
        """Its pid is to be watched, holding it running until it is gone: True when this is
        the first watch of the process (the caller starts it), False when one is under way."""
        held = self._running.get(process_key(identity))
        if held is not None and held.watched:
            return False
        self.hold(identity)
        self._running[process_key(identity)].watched = True
        return True

    def release(self, identity: pb.Identity, exited: bool) -> bool:
        """One hold of that process is over: a stop took its parked stream, or the stream ended,
        or its pid is gone, with the process (`exited`) or not (a stream's end that says nothing:
        the process may run on unseen). Whether the process has exited now: that was its last
        hold, and it `exited`."""
        key = process_key(identity)
        held = self._running.get(key)
        if held is None:
            return False
        held.holds -= 1
        if held.holds > 0:
            return False
        del self._running[key]
        if exited:
            self._exited[key] = held.identity
            while len(self._exited) > EXITED_KEPT:
                self._exited.popitem(last=False)
        return exited

    def runs_another_of(self, identity: pb.Identity) -> bool:
        """Whether another process of the same rank (name and rank) is held running."""
        return any((held.identity.name, held.identity.rank) == (identity.name, identity.rank)
                   and process_key(held.identity) != process_key(identity) for held in self._running.values())

    def running(self) -> list[pb.Identity]:
        return [held.identity for held in self._running.values()]

    def exited(self) -> list[pb.Identity]:
        return list(self._exited.values())
