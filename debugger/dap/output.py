"""The ranks' output, as it is written, in DAP `output` events (`run --dap`: the adapter lives
in the launcher's process, which reads every rank's stdout and stderr).

The launcher's fan-out (meshdbg.host.output.RankLines) hands `RankOutput` each rank's lines,
less those a session already showed (shown marks, meshdbg.wire.shown_marks): the IDE got those
in pdb's reply to its own step, or they are the console's. A line goes to the child session
whose group holds its rank, else to every parent session, category `stdout` or `stderr`, as
debugpy sends a program's output, and names its rank as the child names that thread:
`rank 3 (hosts=0,gpus=3): loss 0.12`. A prefix, because in DAP nothing else names a writer
(`group` opens and closes a foldable block, `source` is a file position a click jumps to),
and a child shows several ranks in one Debug Console.

Bounded: a connection whose socket holds more than OUTPUT_BACKLOG unsent bytes (an IDE reading
more slowly than the ranks write) gets no rank output until it is down to half of that; the
lines in between are dropped with one notice when dropping starts and their count when it
ends. Dropping, not blocking: a slow IDE must not slow the ranks, and the run's terminal
still has every line. Other events are never dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshdbg.debugger.dap.vocabulary import Category
from meshdbg.host.output import Stream

if TYPE_CHECKING:
    from meshdbg.debugger.dap.clients import IdeClient
    from meshdbg.debugger.dap.mesh import Mesh

OUTPUT_BACKLOG = 1 << 20  # unsent bytes to one IDE beyond which rank output is dropped
_CATEGORIES = {Stream.STDOUT: Category.STDOUT, Stream.STDERR: Category.STDERR}
DROPPING = ("meshdbg: the IDE reads more slowly than the ranks write: their output is dropped here until it "
            "catches up (the run's terminal has every line)\n")


class RankOutput:
    """Listens to the launcher's lines (a RankLines listener) for one adapter's mesh."""

    def __init__(self, mesh: "Mesh") -> None:
        self.mesh = mesh

    def __call__(self, rank: int, stream: Stream, lines: list[str]) -> None:
        known = self.mesh.numbered(rank)
        label = known.label if known is not None else f"rank {rank}"
        text = "".join(f"{label}: {line}\n" for line in lines)
        group = known.group if known is not None else None
        if group is not None and not group.closed and group.child is not None:
            listeners = [group.child]
        else:
            listeners = list(self.mesh.parents)
        for listener in listeners:
            listener.rank_output(_CATEGORIES[stream], text, len(lines))


class OutputGate:
    """One IDE connection's rank output: sent while its socket keeps up, else dropped and counted."""

    def __init__(self, client: "IdeClient") -> None:
        self._client = client
        self.dropped = 0  # lines dropped since dropping began (0: not dropping)

    def offer(self, category: Category, text: str, lines: int) -> None:
        backlog = self._client.backlog()
        if self.dropped:
            if backlog > OUTPUT_BACKLOG // 2:
                self.dropped += lines
                return
            self._client.output(Category.CONSOLE, f"meshdbg: {self.dropped} lines of the ranks' output dropped\n")
            self.dropped = 0
        elif backlog > OUTPUT_BACKLOG:
            self.dropped = lines
            self._client.output(Category.CONSOLE, DROPPING)
            return
        self._client.output(category, text)
