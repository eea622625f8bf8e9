"""The registry finds a process's sessions without a pass over every session."""

from __future__ import annotations

from meshdbg.debugger.registry import SessionRegistry
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason


async def _write(message: pb.ServerMessage) -> None:
    pass


def test_of_process_is_the_first_live_session_of_that_process() -> None:
    registry = SessionRegistry()
    later = registry.open(pb.Identity(rank=1, hostname="a", pid=7, thread_id=9), _write)
    first = registry.open(pb.Identity(rank=1, hostname="a", pid=7, thread_id=2), _write)
    registry.open(pb.Identity(rank=2, hostname="b", pid=7, thread_id=1), _write)  # same pid, another host
    assert registry.of_process("a", 7) is first  # in sessions() order: the lower thread
    assert registry.of_process("a", 7) is next(s for s in registry.sessions() if s.identity.hostname == "a")
    registry.close(first, EndReason.CONTINUED)
    assert registry.of_process("a", 7) is later
    registry.close(later, EndReason.CONTINUED)
    assert registry.of_process("a", 7) is None and registry.of_process("c", 7) is None
