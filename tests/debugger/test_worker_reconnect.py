"""A worker whose agent stream broke and opened again takes requests again."""

from __future__ import annotations

import asyncio

from meshdbg.debugger.workers import Worker
from meshdbg.wire.proto import debugger_pb2 as pb


async def pipeline_after_a_break() -> None:
    worker = Worker(1, pb.Identity(rank=0, pid=1), "meshdbg")
    worker.on_connect()
    worker.on_disconnect()  # fails what waits, and closes every kind of request
    worker.on_connect()
    assert worker.outbox is not None
    asked = asyncio.create_task(worker.pipeline(pb.PipelineRequest()))
    sent = asyncio.create_task(worker.outbox.get())
    await asyncio.wait([asked, sent], return_when=asyncio.FIRST_COMPLETED)
    assert sent.done(), f"the request was refused: {asked.exception() if asked.done() else 'not sent'}"
    request_id = sent.result().pipeline.request_id
    worker.on_pipeline(pb.PipelineReport(request_id=request_id))
    assert (await asked).request_id == request_id


def test_a_worker_connected_again_answers_pipeline_requests() -> None:
    asyncio.run(pipeline_after_a_break())
