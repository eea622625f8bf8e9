"""The rank the console is attached to: an AttachedSession held open across prompts.

The console enters pdb mode by opening one of these and leaves it by closing it; the
session itself stays paused on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Callable, Iterator

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.attached_session import AttachedSession
from meshdbg.debugger.peers import SharedLines
from meshdbg.debugger.views import SessionView
from meshdbg.debugger.answers import PdbReply, Shared
from meshdbg.debugger.format import PDB_PROMPT, rank_label, shown_name
from meshdbg.debugger.selection import AttachTarget
from meshdbg.wire.vocabulary import PromptKind

# pdb's own word boundaries (Pdb.__init__ sets them for readline): no `/`, `.` or `-`, so
# `b examples/toy<Tab>` reaches pdb's location completer whole and gets `examples/toy_worker.py:`.
COMPLETER_DELIMS = " \t\n`@#$%^&*()=+[{]}\\|;:'\",<>?"
PDB_WORD = "Pdb"


class Attachment:
    """One open attach: pdb lines go through `send`, Tab through `complete`."""

    def __init__(self, attached: AttachedSession, show: Callable[[str], None] = lambda text: None) -> None:
        self.attached = attached
        self.pdb_prompt = attached.replay.prompt if attached.replay else ""  # what the remote pdb prompts with
        self.prompt_kind = attached.replay.prompt_kind if attached.replay else PromptKind.PDB  # who reads it
        self._idle = asyncio.Event()  # no line under way (`line_under_way`)
        self._idle.set()
        self.end_watcher: asyncio.Task[None] | None = None  # the console's wait for the session's end
        self._shared = SharedLines(show)
        attached.on_shared = self._on_shared

    @classmethod
    async def open(cls, client: ControlClient, target: AttachTarget,
                   show: Callable[[str], None] = lambda text: None, program_shown: bool = False) -> "Attachment":
        """Attach; `show` prints what others do on the session (meshdbg.debugger.peers), line by
        line. `program_shown`: the console printed the rank's output as it came (under `meshdbg
        run`), so the replay does not print it again."""
        attached = client.attach(rank=target.rank, name=target.name, session_id=target.session_id,
                                 following=target.following, program_shown=program_shown)
        await attached.__aenter__()
        return cls(attached, show)

    def _on_shared(self, shared: Shared) -> None:
        self._shared(shared)
        if shared.reply is not None:  # another client's line changed what pdb reads next
            self._prompted(shared.reply)

    @property
    def session(self) -> SessionView:
        """The attached session (AttachedSession has it once entered, as every Attachment is)."""
        return self.attached.session

    @property
    def label(self) -> str:
        return rank_label(self.session)

    def prompt(self, thread: str = "") -> str:
        """`(Pdb r2 hosts=1,gpus=0) `: where the next line goes (`(Pdb r2 hosts=1,gpus=0 sidekick) `
        with `thread`, how the board names it when the rank has stopped in several threads,
        `MainThread pid 4242` in several processes); pdb's other prompts as pdb
        shows them, naming the rank where pdb names itself (`((Pdb r2 ...)) ` in `debug`)."""
        where = f" {self.session.coords_text}" if self.session.coords_text else ""
        name = f"{shown_name(self.session)} " if shown_name(self.session) else ""
        which = f" {thread}" if thread else ""
        if not self.at_pdb_prompt:
            return self.pdb_prompt
        return (self.pdb_prompt or PDB_PROMPT).replace(PDB_WORD, f"{PDB_WORD} {name}r{self.session.rank}{where}{which}",
                                                       1)

    @property
    def at_pdb_prompt(self) -> bool:
        """pdb itself reads the next line (not `interact` or a `commands` block), as the
        session's prompt kind says (never guessed from the prompt's text, which the program
        may set: `sys.ps1` in `interact`, `input("...")`)."""
        return self.prompt_kind.pdbs_own  # (where the rank's label goes)

    def _prompted(self, reply: PdbReply) -> None:
        """pdb's next prompt and who reads it, from a reply (an empty prompt keeps the last)."""
        if reply.prompt:
            self.pdb_prompt, self.prompt_kind = reply.prompt, reply.prompt_kind

    async def send(self, line: str, eof: bool = False, on_output: Callable[[str], None] | None = None) -> PdbReply:
        """pdb's reply to `line`; `on_output` gets the output that comes while it runs (AttachedSession.send)."""
        reply = await self.attached.send(line, eof=eof, on_output=on_output)
        self._prompted(reply)
        return reply

    async def complete(self, line: str, cursor: int) -> tuple[str, list[str]]:
        """(the word being completed, what the remote pdb offers for it in its frame)."""
        begidx = cursor
        while begidx > 0 and line[begidx - 1] not in COMPLETER_DELIMS:
            begidx -= 1
        text = line[begidx:cursor]
        return text, await self.attached.complete(text, line, begidx, cursor)

    async def wait_ended(self) -> PdbReply:
        return await self.attached.wait_ended()

    @contextlib.contextmanager
    def line_under_way(self) -> Iterator[None]:
        """While inside: a line is under way, from its send until its reply is drawn and the end
        it brought said (`wait_idle` waits for it)."""
        self._idle.clear()
        try:
            yield
        finally:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Until no line is under way: a session's end that comes with a line's reply is said by
        that line, below its output; one that comes meanwhile from elsewhere, after it."""
        await self._idle.wait()

    async def close(self) -> None:
        await self.attached.__aexit__(None, None, None)

