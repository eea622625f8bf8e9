"""`Pipeline`: ask every selected rank's agent where its pipeline runtime stands, changing its
action breakpoints first when asked (`meshdbg pipeline`, `meshdbg break`).

As with `stacks` (meshdbg.debugger.sampling), the agent thread answers while the runtime
computes, waits in a RECV or is stopped in pdb; a rank that gives no answer within
ANSWER_TIMEOUT_S, has exited or has no agent stream is listed with its worker state and why,
so a caller can still reason about it (an exited peer is the cause of a stall). Bounded.
"""

from __future__ import annotations

import asyncio

from meshdbg.debugger.deadlines import STACKS_S
from meshdbg.debugger.selection import Selection
from meshdbg.debugger.workers import Worker, WorkerRegistry
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import State

ANSWER_TIMEOUT_S = STACKS_S


async def ask_pipeline(workers: WorkerRegistry, selection: Selection, query: pb.PipelineQuery) -> list[pb.PipelineRank]:
    """Every selected worker's answer, by rank; NoMatchError when no worker is selected."""
    chosen = workers.select(selection)
    if not chosen:
        raise workers.no_match(selection)
    request = pb.PipelineRequest(add_breaks=query.add_breaks, clear_breaks=query.clear_breaks, timings=query.timings)
    return list(await asyncio.gather(*(_of_worker(workers, worker, request) for worker in chosen)))


async def _of_worker(workers: WorkerRegistry, worker: Worker, request: pb.PipelineRequest) -> pb.PipelineRank:
    if workers.state(worker) is State.EXITED:
        return pb.PipelineRank(worker=workers.info(worker), error="the process has exited")
    try:
        report = await asyncio.wait_for(worker.pipeline(request), ANSWER_TIMEOUT_S)
    except asyncio.TimeoutError:
        return pb.PipelineRank(worker=workers.info(worker),
                               error=f"no answer from its agent within {ANSWER_TIMEOUT_S:g} s (it holds the GIL?)")
    except MeshdbgError as exc:
        return pb.PipelineRank(worker=workers.info(worker), error=str(exc))
    return pb.PipelineRank(worker=workers.info(worker), report=report)
