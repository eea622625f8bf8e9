"""`IdeClient`: one IDE connection, the parent session or the child session of one group.

The parent (`attach` with the server's token) hears of every group of ranks stopped at the
same stack and asks the IDE to open a child session for each (`startDebugging`, as debugpy's
adapter does per subprocess); a child (`attach` with the token and its group's id) shows its
ranks as threads and drives them. Until `attach` has checked the token, nothing but
`initialize`, `attach` and `disconnect` is served: a loopback port is open to every local user.
Nothing comes from the ranks' side toward the IDE except events made here (the ranks speak pdb
to the server, never DAP), so no request of theirs can reach the IDE.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
from typing import Any

from meshdbg.debugger.dap.driving import Driving
from meshdbg.debugger.dap.inspecting import Inspecting
from meshdbg.debugger.dap.mesh import Group, Mesh, Rank
from meshdbg.debugger.dap.output import OutputGate
from meshdbg.debugger.selection import describe_ranks
from meshdbg.debugger.dap.vocabulary import THREAD_EXITED, Category, Event, Stopped, stopped_reason
from meshdbg.debugger.dap.protocol import Channel, RequestFailed
from meshdbg.wire.errors import MeshdbgError

CAPABILITIES = {
    "supportsConfigurationDoneRequest": True,
    "supportsSetVariable": True,
    "supportsEvaluateForHovers": True,
    "supportsCompletionsRequest": True,
    "completionTriggerCharacters": ["."],
    "supportsExceptionInfoRequest": True,
    "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsLogPoints": True,
    "supportsFunctionBreakpoints": True,
    "supportsSingleThreadExecutionRequests": True,
    "supportsGotoTargetsRequest": True,
    "supportTerminateDebuggee": True,
    "exceptionBreakpointFilters": [{"filter": "uncaught", "label": "Uncaught Exceptions (post-mortem)",
                                    "default": True}],
}
OPEN_REQUESTS = ("initialize", "attach", "disconnect")  # what is served before the token is checked


class References:
    """Numbers the IDE holds for things of one thread's stop (frames, values, sources): `add`
    them, `get` them back, `forget` a thread's when it moves on."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._numbers = itertools.count(1)
        self._items: dict[int, tuple[int, tuple]] = {}  # number -> (thread id, item)

    def add(self, thread_id: int, *item: Any) -> int:
        number = next(self._numbers)
        self._items[number] = (thread_id, item)
        return number

    def get(self, number: int) -> tuple:
        """(thread id, *item) of a number given out by `add`."""
        try:
            thread_id, item = self._items[number]
            return (thread_id, *item)
        except (KeyError, TypeError):
            raise RequestFailed(f"no {self._what} {number} (the rank has moved on since)") from None

    def forget(self, thread_id: int) -> None:
        self._items = {number: item for number, item in self._items.items() if item[0] != thread_id}


class IdeClient(Inspecting, Driving, Channel):
    """One connection from the IDE: its handlers are named after the requests (see the mixins)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, mesh: Mesh, token: str,
                 address: tuple[str, int]) -> None:
        super().__init__(reader, writer)
        self.mesh = mesh
        self._token = token
        self._address = address
        self.trusted = False
        self.parent = False
        self.group: Group | None = None
        self.configured = False
        self.columns_from_1 = True
        self.frames = References("frame")
        self.values = References("variables reference")
        self.sources = References("source reference")
        self.jumps = References("jump target")  # (of no thread: the IDE asks before it names one)
        self._rank_output = OutputGate(self)

    def refused(self, command: str) -> str:
        if self.trusted or command in OPEN_REQUESTS:
            return ""
        return f"{command} before a successful attach (with the meshdbg token)"

    # ---- lifecycle ------------------------------------------------------------------------

    async def initialize_request(self, args: dict) -> dict:
        self.columns_from_1 = args.get("columnsStartAt1", True)
        return CAPABILITIES

    async def attach_request(self, args: dict) -> dict:
        given = args.get("meshdbg")
        if not isinstance(given, dict):
            given = {}
        if not hmac.compare_digest(str(given.get("token", "")).encode(), self._token.encode()):
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.close()))
            raise RequestFailed('wrong or missing token: put the server\'s token in the launch configuration as '
                                '"meshdbg": {"token": "..."} (meshdbg dap prints it)')
        if "group" in given:
            group = self.mesh.groups.get(int(given["group"]))
            if group is None or group.closed or group.child is not None:
                raise RequestFailed(f"no group {given['group']} waiting for the IDE (its ranks ended or another "
                                    f"window has it)")
            self.group, group.child = group, self
        else:
            self.parent = True
        self.trusted = True
        asyncio.get_running_loop().call_soon(self.event, Event.INITIALIZED)
        return {}

    async def configurationDone_request(self, args: dict) -> dict:
        self.configured = True
        if self.parent:
            asyncio.get_running_loop().call_soon(self.mesh.add_parent, self)
        elif self.group is not None:
            for rank in self.group.ranks:
                session = rank.session
                if session is not None:
                    rank.shown = session.id
                    asyncio.get_running_loop().call_soon(self.rank_stopped, rank, stopped_reason(session.reason))
        return {}

    async def disconnect_request(self, args: dict) -> dict:
        """Leave the ranks paused (meshdbg's detach); with terminateDebuggee, continue those
        stopped (none stopped: nothing to do, as when VS Code's Stop comes while they run)."""
        ranks = self.group.ranks if self.group is not None else list(self.mesh.ranks.values())
        stopped = [r.rank for r in ranks if r.session is not None]
        if args.get("terminateDebuggee") and self.trusted and stopped:
            try:
                await self.mesh.client.resume(describe_ranks(stopped) if self.group is not None else "")
            except MeshdbgError as exc:
                raise RequestFailed(str(exc)) from None
        self._leave()
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.close()))
        return {}

    def _leave(self) -> None:
        """This connection no longer listens: its group's ranks are free for a new child."""
        if self.parent and self in self.mesh.parents:
            self.mesh.parents.remove(self)
        group, self.group = self.group, None
        if group is not None and group.child is self:
            group.child = None
            self.mesh.close_group(group)

    async def close(self) -> None:
        self._leave()
        await super().close()

    # ---- what the mesh tells this connection (mesh.Listener) -----------------------------------

    def announce(self, group: Group) -> None:
        host, port = self._address
        self.request("startDebugging", {"request": "attach", "configuration": {
            "type": "debugpy", "request": "attach", "name": group.name, "connect": {"host": host, "port": port},
            "meshdbg": {"token": self._token, "group": group.id}}})

    def rank_stopped(self, rank: Rank, reason: Stopped) -> None:
        self._forget(rank)
        body = {"reason": reason, "threadId": rank.thread_id, "allThreadsStopped": False}
        if rank.session is not None:
            body["description"] = f"{rank.label} at {rank.session.function} line {rank.session.lineno}"
        self.event(Event.STOPPED, body)

    def rank_continued(self, rank: Rank) -> None:
        self._forget(rank)
        self.event(Event.CONTINUED, {"threadId": rank.thread_id, "allThreadsContinued": False})

    def rank_ended(self, rank: Rank) -> None:
        self.event(Event.THREAD, {"reason": THREAD_EXITED, "threadId": rank.thread_id})

    def rank_output(self, category: Category, text: str, lines: int) -> None:
        self._rank_output.offer(category, text, lines)

    def output(self, category: Category, text: str) -> None:
        self.event(Event.OUTPUT, {"category": category, "output": text})

    def group_ended(self, group: Group) -> None:
        self.event(Event.EXITED, {"exitCode": 0})
        self.event(Event.TERMINATED)

    def _forget(self, rank: Rank) -> None:
        """References into the rank's previous position lapse, as the worker's do."""
        self.frames.forget(rank.thread_id)
        self.values.forget(rank.thread_id)
