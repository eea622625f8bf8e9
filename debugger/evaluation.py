"""`Compare` and `Query`: questions to stopped sessions, each answer bounded by a timeout.

`Compare` is one expression evaluated in every selected stopped session's current frame.

Each rank evaluates it in the frame pdb shows (after `up`/`down`, that one), as `p` would,
and answers with text: the repr, or a summary for tensors and arrays
(meshdbg.worker.values). One session per rank (the first that stopped), concurrently, each
bounded by a timeout: an expression that blocks (a collective, a lock) makes that rank a
"no answer" result, never a hung command.
"""

from __future__ import annotations

import asyncio

from meshdbg.debugger.sessions import Session
from meshdbg.wire.errors import MeshdbgError, SessionError
from meshdbg.wire.proto import debugger_pb2 as pb

DEFAULT_TIMEOUT_S = 5.0


def first_per_rank(sessions: list[Session]) -> list[Session]:
    """The first session of each (name, rank): the thread that stopped first."""
    first: dict[tuple[str, int], Session] = {}
    for session in sorted(sessions, key=lambda s: s.id):
        first.setdefault((session.identity.name, session.rank), session)
    return sorted(first.values(), key=lambda s: (s.rank, s.identity.name))


async def evaluate_all(sessions: list[Session], expression: str, timeout_s: float = 0) -> list[pb.CompareResult]:
    """EXPR on each rank's first session, by rank; each result has a value or an error."""
    timeout = timeout_s if timeout_s > 0 else DEFAULT_TIMEOUT_S
    chosen = first_per_rank(sessions)
    return list(await asyncio.gather(*(_evaluate(s, expression, timeout) for s in chosen)))


async def ask(session: Session, question: pb.QueryRequest, timeout_s: float = 0) -> pb.QueryAnswer:
    """One session's answer to a question (meshdbg.worker.queries); SessionError when it is
    not stopped at its prompt or gives no answer within the timeout (default DEFAULT_TIMEOUT_S)."""
    timeout = timeout_s if timeout_s > 0 else DEFAULT_TIMEOUT_S
    try:
        return await asyncio.wait_for(session.query(question), timeout)
    except asyncio.TimeoutError:
        raise SessionError(f"rank {session.rank} gave no answer within {timeout:g} s") from None


async def _evaluate(session: Session, expression: str, timeout: float) -> pb.CompareResult:
    try:
        answer = await asyncio.wait_for(session.evaluate(expression), timeout)
    except asyncio.TimeoutError:
        return pb.CompareResult(session=session.info(), error=f"no answer within {timeout:g} s")
    except MeshdbgError as exc:
        return pb.CompareResult(session=session.info(), error=str(exc))
    return pb.CompareResult(session=session.info(), value=answer.value, error=answer.error)
