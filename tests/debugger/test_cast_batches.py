"""A cast's results in batches (issue 22): ranks that finish together reach the client in one
event, each result still carrying its own rank's whole output and nothing of another's.

End to end on real worker threads (every result right, outputs past a chunk and past a
batch's byte budget); the coalescing itself on sessions that all finish at once, where it is
deterministic.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from e2e import Server
from meshdbg.debugger.casting import BATCH_BYTES, cast
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.chunks import OUTPUT_CHUNK_CHARS
from meshdbg.wire.proto import debugger_pb2 as pb

THREADS = 24
# Thread 0 prints more than a chunk (chunks, then the result's tail); the others together more than a batch.
COMMAND = f"p str(index % 10) * ({OUTPUT_CHUNK_CHARS + 1000} if index == 0 else 70_000)"


def expected_output(thread: str) -> str:
    index = int(thread.removeprefix("burst-"))
    return repr(str(index % 10) * (OUTPUT_CHUNK_CHARS + 1000 if index == 0 else 70_000)) + "\n"


@pytest.mark.timeout(60)
def test_every_rank_gets_its_own_whole_output_when_results_are_batched(server: Server) -> None:
    worker = server.worker("burst.py", 0, "", str(THREADS))
    server.wait_sessions(THREADS)

    async def cast_all(client: ControlClient) -> None:
        await client.cast("all", "p 0")  # takes each stop's `--Return--` header, which a first command shows
        results = await client.cast("all", COMMAND)
        assert len(results) == THREADS and all(r.ok for r in results)
        for result in results:
            assert result.output == expected_output(result.session.thread), result.session.thread

    async def raw_events(client: ControlClient) -> list[pb.CastEvent]:
        call = client.stub.Cast(pb.CastRequest(selection="all", command="p index", batched=True),
                                metadata=client.connection.metadata())
        return [event async for event in call]

    server.run(cast_all)
    events = server.run(raw_events)
    named = [r.session.id for event in events for r in event.results]
    assert sorted(named) == sorted(s["id"] for s in server.sessions())  # each once
    assert all(not event.HasField("result") for event in events)
    assert server.cli("continue", "all").returncode == 0
    assert worker.communicate(timeout=30)[0] == "done\n"


class FakeSession(SimpleNamespace):
    """What `cast` uses of a session, answering at once."""

    async def execute(self, line: str, on_output: object) -> pb.Reply:
        return pb.Reply(output=self.output)

    def info(self) -> pb.SessionInfo:
        return pb.SessionInfo(id=self.id)


@pytest.mark.parametrize("batched", [True, False])
def test_results_that_finish_together_share_events_within_the_byte_budget(batched: bool) -> None:
    output = "x" * (BATCH_BYTES // 3)  # three fit in a batch, a fourth does not
    sessions = [FakeSession(id=n, output=output, gone="") for n in range(10)]
    events: list[pb.CastEvent] = []

    async def write(event: pb.CastEvent) -> None:
        events.append(event)

    asyncio.run(cast(sessions, "p x", write, seconds=5, batched=batched))
    if batched:
        # all ten are in by the first write: three an event, as the budget allows
        assert [[r.session.id for r in e.results] for e in events] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    else:
        assert [e.result.session.id for e in events] == list(range(10))
    assert all(r.output == output for e in events for r in (e.results if batched else [e.result]))
