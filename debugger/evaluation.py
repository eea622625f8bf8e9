"""`Compare`: one expression evaluated in every selected stopped session's current frame.

Each rank evaluates it in the frame pdb shows (after `up`/`down`, that one), as `p` would,
and answers with text: the repr, or a summary for tensors and arrays
(meshdbg.worker.values). One session per rank (the first that stopped), concurrently, each
bounded by a timeout: an expression that blocks (a collective, a lock) makes that rank a
"no answer" result, never a hung command.
"""

from __future__ import annotations

import asyncio

from meshdbg.debugger.deadlines import NoAnswer, answer_within
from meshdbg.debugger.sessions import Session
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb

def first_per_rank(sessions: list[Session]) -> list[Session]:
    """The first session of each (name, rank): the thread that stopped first."""
    first: dict[tuple[str, int], Session] = {}
    for session in sorted(sessions, key=lambda s: s.id):
        first.setdefault((session.identity.name, session.rank), session)
    return sorted(first.values(), key=lambda s: (s.rank, s.identity.name))


async def evaluate_all(sessions: list[Session], expression: str, timeout: float) -> list[pb.CompareResult]:
    """EXPR on each rank's first session, by rank; each result has a value or an error."""
    chosen = first_per_rank(sessions)
    return list(await asyncio.gather(*(_evaluate(s, expression, timeout) for s in chosen)))


async def _evaluate(session: Session, expression: str, timeout: float) -> pb.CompareResult:
    try:
        answer = await answer_within(session.evaluate(expression), timeout)
    except NoAnswer as exc:
        return pb.CompareResult(session=session.info(), error=str(exc), no_answer=True)
    except MeshdbgError as exc:
        return pb.CompareResult(session=session.info(), error=str(exc))
    return pb.CompareResult(session=session.info(), value=answer.value, error=answer.error)
