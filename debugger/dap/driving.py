"""The requests that move ranks: continue, next, stepIn, stepOut, pause, gotoTargets and goto
(VS Code's "Jump to Cursor": pdb's `jump`), setBreakpoints, setFunctionBreakpoints,
setExceptionBreakpoints. Stepping is pdb's own (`n`, `s`, `r` over the rank's session); with
`singleThread` one rank moves, else every stopped rank of the group. A step's response goes at
once; the rank's new position comes as a `stopped` event when pdb stops again (mesh.Mesh).

A mixin of `IdeClient` (meshdbg.debugger.dap.clients).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Sequence

from meshdbg.debugger.dap.breakpoints import IdeBreakpoint
from meshdbg.debugger.dap.mesh import FUNCTIONS, Rank
from meshdbg.debugger.dap.protocol import RequestFailed
from meshdbg.debugger.dap.vocabulary import Category, Stopped
from meshdbg.debugger.format import not_resumed_text
from meshdbg.debugger.selection import describe_ranks
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.vocabulary import State

if TYPE_CHECKING:
    from meshdbg.debugger.dap.clients import IdeClient

STEPS = {"next": "n", "stepIn": "s", "stepOut": "r"}


class Driving:
    """Handlers of the requests that resume, step, stop ranks and set their breakpoints."""

    def _moving(self: "IdeClient", args: dict, stepping: bool = True) -> list[Rank]:
        """The stopped ranks a resume or step goes to: the thread's alone with `singleThread`,
        else its group's. A step is pdb's command, refused to a rank whose `interact` or
        `commands` block reads its lines; a resume leaves those as pdb would, then continues."""
        rank = self._rank(args["threadId"])
        ranks = [r for r in ([rank] if args.get("singleThread") else self._attached().ranks) if r.session is not None]
        elsewhere = [(r.label, r.session.prompt_kind) for r in ranks
                     if stepping and r.session is not None and not r.session.prompt_kind.pdbs_own]
        if elsewhere:
            label, prompt_kind = elsewhere[0]
            raise RequestFailed(f"{label} is in pdb's {prompt_kind}, not at its "
                                f"prompt: end that first (the console, or `pdb` lines in the Debug Console)")
        return ranks

    async def continue_request(self: "IdeClient", args: dict) -> dict:
        """Resume the thread's rank (`singleThread`) or its group's; a rank not answering is not
        resumed, and the Debug Console says so (the IDE took every thread for running)."""
        ranks = self._moving(args, stepping=False)
        left: list[tuple[int, str]] = []
        if ranks:
            try:
                left = (await self.mesh.client.resume(describe_ranks([r.rank for r in ranks]))).not_resumed
            except MeshdbgError as exc:
                raise RequestFailed(str(exc)) from None
        if left:
            self.output(Category.STDERR, f"{not_resumed_text(left)}\n")
        everyone = not args.get("singleThread") and len(ranks) == len(self._attached().ranks)
        return {"allThreadsContinued": everyone and not left}

    async def next_request(self: "IdeClient", args: dict) -> dict:
        return self._step(args, STEPS["next"])

    async def stepIn_request(self: "IdeClient", args: dict) -> dict:
        return self._step(args, STEPS["stepIn"])

    async def stepOut_request(self: "IdeClient", args: dict) -> dict:
        return self._step(args, STEPS["stepOut"])

    def _step(self: "IdeClient", args: dict, line: str) -> dict:
        for rank in self._moving(args):
            if rank.thread_id != args["threadId"]:
                self.rank_continued(rank)
            self.mesh.spawn(self._command(rank, line))
        return {}

    async def _command(self: "IdeClient", rank: Rank, line: str) -> None:
        """Run a pdb line on a rank; what pdb says goes to the Debug Console."""
        session = rank.session
        if session is None:
            return
        try:
            reply = await self.mesh.command(session.id, line)
        except MeshdbgError as exc:
            self.output(Category.STDERR, f"{rank.label}: {exc}\n")
            return
        if reply.output.strip():
            self.output(Category.CONSOLE, f"{rank.label}: {reply.output}")

    async def gotoTargets_request(self: "IdeClient", args: dict) -> dict:
        """Where "Jump to Cursor" goes: the line asked, in its file (the IDE names the thread
        only in `goto`, where pdb judges the jump)."""
        path = args["source"].get("path")
        if not path:
            raise RequestFailed("a jump needs a file path")
        line = int(args["line"])
        self.jumps.forget(0)
        return {"targets": [{"id": self.jumps.add(0, path, line), "label": f"{path}:{line}", "line": line}]}

    async def goto_request(self: "IdeClient", args: dict) -> dict:
        """pdb's `jump LINE` on the thread's rank: the next line it runs, in the frame it stopped
        in (pdb refuses another frame, and a jump into a block); then `stopped` ("goto")."""
        _, path, line = self.jumps.get(args["targetId"])
        rank = self._rank(args["threadId"])
        session = self._stopped(args["threadId"])
        if os.path.realpath(path) != os.path.realpath(session.filename):
            raise RequestFailed(f"pdb jumps only within the file of the frame it stopped in ({session.filename})")
        try:
            reply = await self.mesh.command(session.id, f"jump {line}", quiet=True)
        except MeshdbgError as exc:
            raise RequestFailed(str(exc)) from None
        if reply.output.startswith("***"):
            raise RequestFailed(reply.output.strip().removeprefix("*** "))
        asyncio.get_running_loop().call_soon(self.rank_stopped, rank, Stopped.GOTO)  # after this response, as debugpy
        return {}

    async def pause_request(self: "IdeClient", args: dict) -> dict:
        """Interrupt the group's running ranks (a rank running a pdb command: break into it)."""
        self._rank(args["threadId"])
        free = []
        try:
            for rank in self._attached().ranks:
                session = self.mesh.live_session(rank)
                if session is None and not rank.ended:
                    free.append(rank.rank)
                elif session is not None and (session.state is State.RUNNING or self.mesh.commanding(session.id)):
                    self.mesh.pausing.add(session.id)
                    await self.mesh.client.break_in(session.id)
            if free:
                await self.mesh.client.interrupt(describe_ranks(free))
        except MeshdbgError as exc:
            raise RequestFailed(str(exc)) from None
        return {}

    async def setBreakpoints_request(self: "IdeClient", args: dict) -> dict:
        path = args["source"].get("path")
        if not path:
            raise RequestFailed("breakpoints need a file path")
        asked = [(f"{path}:{int(b['line'])}", IdeBreakpoint.from_dap(b), int(b["line"])) for b in args.get("breakpoints", [])]
        return await self._place(path, asked)

    async def setFunctionBreakpoints_request(self: "IdeClient", args: dict) -> dict:
        """pdb's `b FUNCTION`: a name pdb finds from where the rank stopped (`train_step`,
        `model.forward`), or `module.function` of a module file along sys.path (`textwrap.dedent`);
        it stops at the function's first line, as local pdb's `b`."""
        return await self._place(FUNCTIONS, [(str(b["name"]).strip(), IdeBreakpoint.from_dap(b), None)
                                             for b in args.get("breakpoints", [])])

    async def _place(self: "IdeClient", kept: str, asked: Sequence[tuple[str, IdeBreakpoint, int | None]]) -> dict:
        """Set one set of the IDE's breakpoints (each where pdb's `b` puts it, what the IDE asked
        of it, its line if it is a file's) in every stopped rank, and in the others' when they
        stop; answered one by one in the IDE's order, as the first stopped rank of this window's
        pdb says each is set."""
        await self.mesh.set_breakpoints(kept, {where: breakpoint for where, breakpoint, _ in asked if where})
        ranks = self.group.ranks if self.group is not None else list(self.mesh.ranks.values())
        judge = next((r for r in ranks if r.session is not None), None)
        shown = []
        for where, _, line in asked:
            applied = await self.mesh.verify(judge, kept, where) if judge is not None and where else None
            at = {"line": line} if line else {}
            if not where:
                shown.append({"verified": False, "message": "a function breakpoint needs a name"})
            elif applied is None:
                shown.append({"verified": False, **at, "message": "set in each rank's pdb when it stops"})
            elif applied.number is None:
                shown.append({"verified": False, **at, "message": applied.why})
            else:
                shown.append({"verified": True, "line": applied.line,
                              "source": {"path": applied.path if kept == FUNCTIONS else kept}})
        return {"breakpoints": shown}

    async def setExceptionBreakpoints_request(self: "IdeClient", args: dict) -> dict:
        """"uncaught" is meshdbg's post-mortem: off, post-mortem stops are left to the console."""
        self.mesh.post_mortem = "uncaught" in args.get("filters", [])
        return {"breakpoints": [{"verified": True} for _ in args.get("filters", [])]}
