"""Interrupts that race a rank's own stops: every one ends with the rank paused in one session.

The agent's interrupt is a signal whose handler runs in the main thread between any two
bytecodes, so it can land inside meshdbg's own code as the rank opens a stop for its
breakpoint(). Nested there it waited for good on a hold the stop had taken, or opened a
second session that never stopped, about once in 400 rounds of this test's loop
(meshdbg.worker.hook._Opening); or, landing while pdb's thread polled its stream with
gRPC's lock of the call taken, its note woke the poll, which takes that lock: about once in
2,000 (meshdbg.worker.signal_hold._note). The rank was lost either way.
"""

from __future__ import annotations

import asyncio
import random

from e2e import Server
from meshdbg.debugger.control import ControlClient
from meshdbg.wire.vocabulary import State
from watching import watch_until

ROUNDS = 1500
STOP_S = 10.0


def test_resume_then_interrupt_a_rank_that_keeps_stopping_always_leaves_it_paused_once(server: Server) -> None:
    server.worker("stops_every_2ms.py", bootstrap=True)
    server.wait_sessions(1)
    rounds = random.Random(0)

    async def body(client: ControlClient) -> None:
        for round_ in range(ROUNDS):
            await client.resume("0")
            await asyncio.sleep(rounds.random() * 0.003)  # anywhere in its next 2 ms run, or its next stop
            await client.interrupt("0")
            try:
                await asyncio.wait_for(watch_until(client, {"stopped": [0], "count": 1}), STOP_S)
            except asyncio.TimeoutError:
                listed = [(s.id, s.state) for s in await client.list()]
                raise AssertionError(f"round {round_}: rank 0 not paused in one session within {STOP_S} s: "
                                     f"{listed}") from None
        assert [s.state for s in await client.list()] == [State.STOPPED]

    server.run(body)
