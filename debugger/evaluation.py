"""`Compare` and `Query`: questions to stopped sessions, each answer bounded by a timeout.

`Compare` is one expression evaluated in every selected stopped session's current frame.

Each rank evaluates it in the frame pdb shows (after `up`/`down`, that one), as `p` would,
and answers with text: the repr, or a summary for tensors and arrays
(meshdbg.worker.values). Every session, so every stopped thread of a rank, concurrently, each
bounded by a timeout: an expression that blocks (a collective, a lock) makes that rank a
"no answer" result, never a hung command.
"""

from __future__ import annotations

import asyncio

from meshdbg.debugger.deadlines import COMPARE_S, NoAnswer, answer_within, deadline
from meshdbg.debugger.sessions import Session
from meshdbg.wire.errors import MeshdbgError, SessionError
from meshdbg.wire.proto import debugger_pb2 as pb

async def evaluate_all(sessions: list[Session], expression: str, timeout: float) -> list[pb.CompareResult]:
    """EXPR in every session (each thread of a rank stopped in several), by rank and thread;
    each result has a value or an error."""
    chosen = sorted(sessions, key=lambda s: s.order)
    return list(await asyncio.gather(*(_evaluate(s, expression, timeout) for s in chosen)))


async def ask(session: Session, question: pb.QueryRequest, timeout_s: float = 0) -> pb.QueryAnswer:
    """One session's answer to a question (meshdbg.worker.queries); SessionError when it is
    not stopped at its prompt or gives no answer within the timeout (default: compare's)."""
    timeout = deadline(timeout_s, COMPARE_S)
    try:
        return await answer_within(session.query(question), timeout)
    except NoAnswer:
        raise SessionError(f"rank {session.rank} gave no answer within {timeout:g} s") from None


async def _evaluate(session: Session, expression: str, timeout: float) -> pb.CompareResult:
    try:
        answer = await answer_within(session.evaluate(expression), timeout)
    except NoAnswer as exc:
        return pb.CompareResult(session=session.info(), error=str(exc), no_answer=True)
    except MeshdbgError as exc:
        return pb.CompareResult(session=session.info(), error=str(exc))
    return pb.CompareResult(session=session.info(), value=answer.value, error=answer.error)
