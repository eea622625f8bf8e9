"""Let a worker fork only once gRPC is quiet, so that the child can open sessions of its own.

gRPC's fork handlers (pthread_atfork in its core) shut its threads down before `fork()` and
restart them in the child, but only when no other thread is inside gRPC at that moment;
otherwise they log "Other threads are currently calling into gRPC, skipping fork() handlers"
and the child inherits a half-held gRPC that crashes on first use. A session that has just
ended (`continue`) leaves the channel's polling thread inside gRPC for a few milliseconds
while its last operations drain, and a script that forks right after `continue` hits that
window. `wait_until_quiet`, run before every fork, waits (bounded) until every finished stream
has drained and no connectivity poll is running.

It reads two fields of grpc's sync channel (`_call_state.managed_calls`,
`_connectivity_state.polling`); with a grpc that lacks them it does not wait. Streams still
open in other threads (another stopped thread, an agent stream) keep gRPC busy for good:
waiting for them would only delay the fork, so they are counted and not waited for. The
child then starts with none: its stops open channels of their own (meshdbg.worker.remote).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Callable, Iterable

import grpc
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # (no stubs for gRPC's Cython core)

QUIET_TIMEOUT_S = 1.0
_POLL_S = 0.002
FORK_SUPPORT = "GRPC_ENABLE_FORK_SUPPORT"
_FALSE = {"0", "false", "f", "no", "n"}  # what gRPC's core reads as false (absl::SimpleAtob); anything else keeps it on


def fork_handlers_on() -> bool:
    """gRPC's Python fork handlers are on (GRPC_ENABLE_FORK_SUPPORT=1 or true; unknown to this
    gRPC: taken as on): a forked child closes its parent's channels, draining their calls
    through each channel's own queue (meshdbg.worker.polled takes no segregated call then)."""
    is_enabled = getattr(cygrpc, "is_fork_support_enabled", None)
    return is_enabled is None or bool(is_enabled())


def fork_support_off() -> bool:
    """gRPC's core was told not to handle forks (GRPC_ENABLE_FORK_SUPPORT=0 or false): a child
    forked after its parent used gRPC then has none of gRPC's threads, and its first call waits
    for good, deadlines included (with the variable unset, the core handles forks)."""
    return os.environ.get(FORK_SUPPORT, "").strip().lower() in _FALSE


class ForkGuard:
    """Counts the open streams of each channel and, before a fork, waits for the rest to drain."""

    def __init__(self, channels: Callable[[], Iterable[grpc.Channel]]) -> None:
        self._channels = channels
        self._calls: weakref.WeakSet[grpc.Future] = weakref.WeakSet()
        self._calls_of: weakref.WeakKeyDictionary[grpc.Future, grpc.Channel] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def opened(self, channel: grpc.Channel, call: grpc.Future) -> None:
        """`call` is a stream on `channel`; it counts as open until it is done."""
        with self._lock:
            self._calls.add(call)
            self._calls_of[call] = channel

    def _open_on(self, channel: grpc.Channel) -> int:
        with self._lock:
            return sum(1 for call in list(self._calls) if self._calls_of.get(call) is channel and not call.done())

    def quiet(self, channel: grpc.Channel) -> bool:
        """No thread of `channel` is inside gRPC except for streams that are still open."""
        call_state = getattr(channel, "_call_state", None)
        connectivity = getattr(channel, "_connectivity_state", None)
        in_flight = getattr(call_state, "managed_calls", 0)
        polling = getattr(connectivity, "polling", False)
        return not polling and in_flight <= self._open_on(channel)

    def wait_until_quiet(self, timeout: float = QUIET_TIMEOUT_S) -> bool:
        """Wait up to `timeout` until every channel is quiet; whether it became so."""
        deadline = time.monotonic() + timeout
        while not all(self.quiet(channel) for channel in list(self._channels())):
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_S)
        return True

    def _forget_in_child(self) -> None:
        """In a forked child: the parent's streams are not the child's (nor is a lock another
        thread of the parent may have held)."""
        self._lock = threading.Lock()
        self._calls = weakref.WeakSet()
        self._calls_of = weakref.WeakKeyDictionary()

    def install(self, in_child: Callable[[], None]) -> None:
        """Run `wait_until_quiet` before every `os.fork()` of this process, and `in_child`
        in the child after it (which then starts with no stream of its own)."""
        def child() -> None:
            self._forget_in_child()
            in_child()

        os.register_at_fork(before=self.wait_until_quiet, after_in_child=child)
