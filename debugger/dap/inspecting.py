"""The requests that look at stopped ranks: threads, stackTrace, scopes, variables, setVariable,
evaluate, source, completions, exceptionInfo. Every answer is data from the paused pdb (a
structured query, meshdbg.worker.queries), never pdb's text parsed; a line typed in the Debug
Console that starts with `pdb ` goes to pdb as typed.

A mixin of `IdeClient` (meshdbg.debugger.dap.clients), which gives it `mesh`, `group` and the
reference tables.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from meshdbg.debugger.console.attachment import COMPLETER_DELIMS
from meshdbg.debugger.dap.mesh import Group, Rank, position
from meshdbg.debugger.dap.protocol import RequestFailed
from meshdbg.debugger.dap.vocabulary import Category, Stopped
from meshdbg.debugger.value_groups import value_groups
from meshdbg.debugger.selection import ranks_text
from meshdbg.debugger.views import SessionView
from meshdbg.debugger.answers import CompareView
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb

if TYPE_CHECKING:
    from meshdbg.debugger.dap.clients import IdeClient

PDB_PREFIX = "pdb "  # a Debug Console line for pdb itself (`pdb where`, `pdb b 12`)


def grouped_text(results: list[CompareView]) -> str:
    """Ranks grouped by equal answer, largest group first: `ranks 0-2: 0.5 | rank 3: nan`
    (one group per line when an answer has several)."""
    groups = value_groups(results)
    parts = [f"{ranks_text(g['ranks'])}: {g['value']}" for g in groups]
    return ("\n" if any("\n" in g["value"] for g in groups) else " | ").join(parts) or "no stopped rank"


class Inspecting:
    """Handlers of the requests that read (and set) what a stopped rank holds."""

    # ---- helpers ---------------------------------------------------------------------------

    def _rank(self: "IdeClient", thread_id: int) -> Rank:
        rank = self.mesh.threads.get(thread_id)
        if rank is None or self.group is None or rank not in self.group.ranks:
            raise RequestFailed(f"no thread {thread_id} in this session")
        return rank

    def _attached(self: "IdeClient") -> Group:
        """The group this window shows; RequestFailed for the parent session, which has none."""
        if self.group is None:
            raise RequestFailed("pick a rank's frame first (the parent session has no ranks)")
        return self.group

    def _stopped(self: "IdeClient", thread_id: int) -> SessionView:
        rank = self._rank(thread_id)
        if rank.session is None:
            raise RequestFailed(f"{rank.label} {'is gone' if rank.ended else 'runs'}, not stopped in pdb")
        return rank.session

    async def _ask(self: "IdeClient", session_id: int, question: pb.QueryRequest) -> pb.QueryAnswer:
        try:
            answer = await self.mesh.client.query(session_id, question)
        except MeshdbgError as exc:
            raise RequestFailed(str(exc)) from None
        if answer.error:
            raise RequestFailed(answer.error)
        return answer

    def _source(self: "IdeClient", thread_id: int, session_id: int, filename: str) -> dict:
        """A frame's source: its path when this machine has the file, else a reference to ask
        the rank for it (a file that exists only on the rank's host)."""
        source: dict[str, str | int] = {"name": os.path.basename(filename) or filename, "path": filename}
        if not os.path.isfile(filename):
            source["sourceReference"] = self.sources.add(thread_id, session_id, filename)
        return source

    def _variable(self: "IdeClient", thread_id: int, session_id: int, frame: int, value: pb.QueryVariable) -> dict:
        reference = self.values.add(thread_id, session_id, value.reference, frame) if value.reference else 0
        shown = {"name": value.name, "value": value.value, "type": value.type, "variablesReference": reference}
        if value.evaluate_name:  # VS Code's "Add to Watch", "Copy as Expression"
            shown["evaluateName"] = value.evaluate_name
        return shown

    # ---- requests --------------------------------------------------------------------------

    async def threads_request(self: "IdeClient", args: dict) -> dict:
        ranks = self.group.ranks if self.group is not None else []
        return {"threads": [{"id": r.thread_id, "name": r.label} for r in ranks if not r.ended]}

    async def stackTrace_request(self: "IdeClient", args: dict) -> dict:
        thread_id = args["threadId"]
        session = self._stopped(thread_id)
        frames = (await self._ask(session.id, pb.QueryRequest(frames=pb.QueryFrames()))).frames.frames
        shown = [{"id": self.frames.add(thread_id, session.id, index), "name": frames[index].function,
                  "line": frames[index].lineno, "column": 1,
                  "source": self._source(thread_id, session.id, frames[index].filename)}
                 for index in reversed(range(len(frames)))]
        start = args.get("startFrame") or 0
        levels = args.get("levels") or len(shown)
        return {"stackFrames": shown[start:start + levels], "totalFrames": len(shown)}

    async def scopes_request(self: "IdeClient", args: dict) -> dict:
        thread_id, session_id, frame = self.frames.get(args["frameId"])
        answer = await self._ask(session_id, pb.QueryRequest(scopes=pb.QueryScopes(frame=frame)))
        return {"scopes": [{"name": scope.name, "presentationHint": "locals" if scope.name == "Locals" else "globals",
                            "variablesReference": self.values.add(thread_id, session_id, scope.reference, frame),
                            "namedVariables": scope.children, "expensive": False}
                           for scope in answer.variables.variables]}

    async def variables_request(self: "IdeClient", args: dict) -> dict:
        thread_id, session_id, reference, frame = self.values.get(args["variablesReference"])
        answer = await self._ask(session_id, pb.QueryRequest(variables=pb.QueryVariables(
            reference=reference, start=args.get("start") or 0, count=args.get("count") or 0)))
        return {"variables": [self._variable(thread_id, session_id, frame, v) for v in answer.variables.variables]}

    async def setVariable_request(self: "IdeClient", args: dict) -> dict:
        thread_id, session_id, reference, frame = self.values.get(args["variablesReference"])
        answer = await self._ask(session_id, pb.QueryRequest(set_variable=pb.QuerySetVariable(
            reference=reference, name=args["name"], expression=args["value"], frame=frame)))
        shown = self._variable(thread_id, session_id, frame, answer.value)
        return {"value": shown["value"], "type": shown["type"], "variablesReference": shown["variablesReference"]}

    async def evaluate_request(self: "IdeClient", args: dict) -> dict:
        """Python in the frame (a statement too, in the REPL); `pdb ...` to pdb as typed. With
        no frame, in a child's REPL: on every stopped rank of the group, answered grouped."""
        expression, context = args["expression"], args.get("context", "repl")
        frame_id = args.get("frameId")
        to_pdb = context == "repl" and expression.startswith(PDB_PREFIX)
        if frame_id is None:
            return {"result": await self._evaluate_on_group(expression, to_pdb), "variablesReference": 0}
        thread_id, session_id, frame = self.frames.get(frame_id)
        if to_pdb:
            return {"result": await self._pdb_line(thread_id, session_id, expression[len(PDB_PREFIX):]),
                    "variablesReference": 0}
        answer = await self._ask(session_id, pb.QueryRequest(inspect=pb.QueryInspect(
            frame=frame, expression=expression, statements=context == "repl")))
        if answer.value.output:
            self.output(Category.STDOUT, answer.value.output)
        shown = self._variable(thread_id, session_id, frame, answer.value)
        return {"result": shown["value"], "type": shown["type"], "variablesReference": shown["variablesReference"]}

    async def _pdb_line(self: "IdeClient", thread_id: int, session_id: int, line: str) -> str:
        """pdb's output for a line typed in the Debug Console; a `stopped` event when it moved
        the rank (`pdb up`, `pdb n`), none when it only printed (`pdb p x`)."""
        rank = self._rank(thread_id)
        before = position(rank.session) if rank.session else None
        try:
            reply = await self.mesh.command(session_id, line, quiet=True)
        except MeshdbgError as exc:
            raise RequestFailed(str(exc)) from None
        if not reply.ended and position(reply) != before:
            self.rank_stopped(rank, Stopped.STEP)
        return reply.output.rstrip("\n")

    async def _evaluate_on_group(self: "IdeClient", expression: str, to_pdb: bool) -> str:
        if self.group is None:
            raise RequestFailed("pick a rank's frame first (the parent session has no ranks)")
        try:
            if to_pdb:
                views = await self._pdb_line_on_group(expression[len(PDB_PREFIX):])
            else:
                views = await self.mesh.client.compare(self.group.selection, expression)
        except MeshdbgError as exc:
            raise RequestFailed(str(exc)) from None
        return grouped_text(views)

    async def _pdb_line_on_group(self: "IdeClient", line: str) -> list[CompareView]:
        """`cast` of a Debug Console line to the group's stopped ranks; `stopped` for each it moved."""
        group = self._attached()
        stopped = {r.session.id: r for r in group.ranks if r.session is not None}
        before = {r.session.id: position(r.session) for r in group.ranks if r.session is not None}
        for session_id in stopped:
            self.mesh.hush(session_id)
        try:
            results = await self.mesh.client.cast(group.selection, line)
        except MeshdbgError:
            for session_id in stopped:
                self.mesh.hush(session_id, hushed=False)
            raise
        for result in results:
            rank = stopped.get(result.session.id)
            if rank is None:
                continue
            if result.error:
                self.mesh.hush(result.session.id, hushed=False)
            elif not result.ended and position(result.session) != before[result.session.id]:
                self.rank_stopped(rank, Stopped.STEP)
        return [CompareView(r.session, r.output.rstrip("\n"), r.error) for r in results]

    async def source_request(self: "IdeClient", args: dict) -> dict:
        reference = args.get("sourceReference") or args.get("source", {}).get("sourceReference")
        if not reference:  # a path alone: the IDE's own to open (this adapter reads only what a frame showed)
            raise RequestFailed("no sourceReference: a file this machine has is opened by its path")
        _, session_id, filename = self.sources.get(reference)
        answer = await self._ask(session_id, pb.QueryRequest(source=pb.QuerySource(filename=filename)))
        return {"content": answer.source.text, "mimeType": "text/x-python"}

    async def completions_request(self: "IdeClient", args: dict) -> dict:
        text, column = args["text"], args["column"] - (1 if self.columns_from_1 else 0)
        frame_id = args.get("frameId")
        if frame_id is not None:
            session_id = self.frames.get(frame_id)[1]
        else:
            stopped = [r.session for r in (self.group.ranks if self.group else []) if r.session is not None]
            if not stopped:
                return {"targets": []}
            session_id = stopped[0].id
        line = text[len(PDB_PREFIX):column] if text.startswith(PDB_PREFIX) else "p " + text[:column]
        cursor = len(line)
        begin = cursor
        while begin > 0 and line[begin - 1] not in COMPLETER_DELIMS:
            begin -= 1
        answer = await self._ask(session_id, pb.QueryRequest(complete=pb.CompleteRequest(
            text=line[begin:cursor], line=line, begidx=begin, endidx=cursor)))
        start = column - (cursor - begin) + (1 if self.columns_from_1 else 0)
        return {"targets": [{"label": match, "text": match, "start": start, "length": cursor - begin}
                            for match in answer.completions.matches]}

    async def exceptionInfo_request(self: "IdeClient", args: dict) -> dict:
        session = self._stopped(args["threadId"])
        error = (await self._ask(session.id, pb.QueryRequest(exception=pb.QueryException()))).exception
        return {"exceptionId": error.type, "description": error.message, "breakMode": "unhandled",
                "details": {"typeName": error.type, "message": error.message, "stackTrace": error.traceback}}
