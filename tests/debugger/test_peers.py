"""Two clients attached to one rank each see what the other does there (issue 17, point 9):
its line, echoed with pdb's prompt, then the output and pdb's reply; a `cast` and a `continue`
too; and the program's own output while pdb waits. Real `serve`, a real worker, the API.
"""

from __future__ import annotations

import asyncio

from e2e import Server
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.peers import PeerFeed, SharedLines, echo, output, reply
from meshdbg.debugger.answers import Shared
from meshdbg.wire.proto import debugger_pb2 as pb

WAIT_S = 10.0


class Screen:
    """What a second client shows of the shared events, as `meshdbg attach --plain` prints them."""

    def __init__(self) -> None:
        self.text = ""
        self.changed = asyncio.Event()
        self.lines = SharedLines(self._show)

    def _show(self, text: str) -> None:
        self.text += text
        self.changed.set()

    async def until(self, part: str) -> str:
        async def wait() -> None:
            while part not in self.text:
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(wait(), WAIT_S)
        return self.text


def test_a_second_client_sees_the_first_ones_lines_output_and_replies(server: Server) -> None:
    server.worker("ticker.py")
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        screen = Screen()
        async with client.attach(rank=0) as first, client.attach(rank=0, on_shared=screen.lines) as second:
            reply = await first.send("p value")
            assert reply.output == "41\n"
            await screen.until("41\n")
            assert screen.text == "(Pdb) p value   [sent by another client]\n41\n"
            await client.cast("0", "n")
            await screen.until("-> print(")
            assert "(Pdb) n   [sent by another client]\n" in screen.text
            mine = await second.send("p value")  # its own line is not echoed back to it
            assert mine.output == "42\n" and screen.text.count("p value") == 1
            await first.send("!later('from a thread')")  # printed 0.2 s later, while pdb waits
            await screen.until("from a thread\n")
            assert (await first.send("c")).ended
            end = await asyncio.wait_for(second.wait_ended(), WAIT_S)
            assert end.ended
            assert screen.text.endswith("(Pdb) c   [sent by another client]\n")

    server.run(body)


def test_the_programs_output_between_commands_is_in_the_replay_of_a_later_attach(server: Server) -> None:
    server.worker("ticker.py")
    server.wait_sessions(1)

    async def body(client: ControlClient) -> None:
        screen = Screen()
        async with client.attach(rank=0, on_shared=screen.lines):
            async with client.attach(rank=0) as first:
                await first.send("!later('between commands')")
                stop = await first.send("n")  # back before the thread prints
            await screen.until("between commands\n")
            async with client.attach(rank=0) as late:
                # the last line, where it stands (once), then what the program printed since
                assert late.replay.output == "(Pdb) n\n" + stop.output + "between commands\n"
            # A client that showed the program's output as it came (`meshdbg run`'s console)
            # gets pdb's last reply and no more: the program's lines came to it already.
            async with client.attach(rank=0, program_shown=True) as shown:
                assert shown.replay.output == "(Pdb) n\n" + stop.output
                await shown.send("!print('during a command')")
            async with client.attach(rank=0, program_shown=True) as shown:
                assert shown.replay.output.endswith("(Pdb) !print('during a command')\nduring a command\n")

    server.run(body)


def test_a_client_that_falls_behind_loses_output_not_the_echo_or_the_reply() -> None:
    async def body() -> list[pb.ProgramShared]:
        feed = PeerFeed(limit=10)
        for shared in (echo("(Pdb) ", "p x"), output("12345678"), output("abcdefgh"), reply(pb.Reply(output="2\n"))):
            feed.put(shared)
        got = []
        for _ in range(4):
            got.append(await asyncio.wait_for(feed.get(), 1))
            feed.done()
        await asyncio.wait_for(feed.drained(), 1)
        return got

    got = asyncio.run(body())
    assert [Shared.from_pb(s) for s in got] == [
        Shared(line="p x", prompt="(Pdb) "), Shared(output="12345678"),
        Shared(output="[meshdbg: 8 characters of output not shown here: this client fell behind]\n"),
        Shared(reply=Shared.from_pb(reply(pb.Reply(output="2\n"))).reply)]
