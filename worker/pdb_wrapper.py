"""`PdbWrapper`: pdb whose input and output travel over a meshdbg session stream.

It overrides only the seams (DESIGN §4): pdb's stdin and stdout, the point where pdb leaves
(continue and quit end the session instead of killing the worker), and the few commands that
would read the worker's own terminal. Stepping, breakpoints and evaluation stay in pdb/bdb.
Everything pdb writes is buffered and sent together with the next read request, so one
command costs one round trip.
"""

from __future__ import annotations

import bdb
import io
import pdb
import sys
import threading
from types import FrameType, TracebackType
from typing import Callable

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import EndReason
from meshdbg.worker.remote import RemoteSession
from meshdbg.worker.stacks import answer_sample
from meshdbg.worker.values import evaluate

SessionOpener = Callable[[], RemoteSession]


_thread_state = threading.local()


class _EndWithThread:
    """Kept in thread-local storage: ends a session still open when its thread finishes.

    Stepping (`n`, `s`) off a thread's last frame leaves pdb without a `continue`, so nothing
    else would tell the server; the session would linger as "running" until the process exits.
    """

    def __init__(self, remote: RemoteSession) -> None:
        self.remote = remote

    def __del__(self) -> None:
        self.remote.end("", EndReason.THREAD_FINISHED, wait=False)


def _end_with_thread(remote: RemoteSession) -> None:
    """Tie `remote` to the calling thread's life (the main thread's end is the process's)."""
    if threading.current_thread() is threading.main_thread():
        return
    watch = getattr(_thread_state, "watch", None)
    if watch is None or watch.remote is not remote:
        _thread_state.watch = _EndWithThread(remote)


class _RemoteStdin:
    """pdb's stdin: each `readline` ships pending output and waits for the next line."""

    def __init__(self, owner: "PdbWrapper") -> None:
        self._owner = owner

    def readline(self) -> str:
        return self._owner.read_remote_line()


class PdbWrapper(pdb.Pdb):
    """A pdb.Pdb whose console is a remote client of the DebugClient."""

    def __init__(self, open_session: SessionOpener, remote: RemoteSession | None = None) -> None:
        self._output = io.StringIO()
        super().__init__(stdin=_RemoteStdin(self), stdout=self._output, nosigint=True, readrc=False)
        self.use_rawinput = False
        self._open_session = open_session
        self._remote = remote
        self._leaving: EndReason | None = None  # set when pdb is about to let the worker run

    # ---- session lifecycle ------------------------------------------------------------

    def interaction(self, frame: FrameType | None, traceback: TracebackType | None) -> None:
        if self._remote is None:
            try:
                self._remote = self._open_session()
            except Exception as exc:  # any failure to reach the server must not stop the worker
                sys.stderr.write(f"meshdbg: cannot open a debug session ({exc}); continuing\n")
                self.set_continue()
                return
        _end_with_thread(self._remote)
        self._leaving = None
        super().interaction(frame, traceback)
        if self._leaving is not None:
            self._end_session(self._leaving)

    def set_continue(self) -> None:
        self._leaving = self._leaving or EndReason.CONTINUED
        super().set_continue()

    def _end_session(self, reason: EndReason) -> None:
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.end(self._take_output(), reason)

    def _take_output(self) -> str:
        text = self._output.getvalue()
        self._output.seek(0)
        self._output.truncate()
        return text

    def _frame(self) -> pb.Frame:
        if not self.stack:
            return pb.Frame()
        frame, lineno = self.stack[self.curindex]
        return pb.Frame(filename=frame.f_code.co_filename, function=frame.f_code.co_name, lineno=lineno)

    def read_remote_line(self) -> str:
        """Send what pdb wrote plus a read request; return the line the server sends back."""
        output = self._take_output()
        if output.endswith(self.prompt):
            output = output[: -len(self.prompt)]
        remote = self._remote
        if remote is None:
            return "continue\n"
        remote.send(pb.WorkerMessage(prompt=pb.Prompt(output=output, prompt=self.prompt, frame=self._frame())))
        while True:
            message = remote.receive()
            kind = message.WhichOneof("kind") if message is not None else None
            if kind == "input":
                return message.input.line + "\n"
            if kind == "resume":
                if message.resume.clear_breakpoints:
                    self.clear_all_breaks()
                return "continue\n"
            if kind == "complete":
                matches = self.complete_remote(message.complete)
                remote.send(pb.WorkerMessage(completions=pb.Completions(
                    request_id=message.complete.request_id, matches=matches)))
            elif kind == "sample":  # `meshdbg stacks` for a process without an agent stream
                remote.send(pb.WorkerMessage(stacks=answer_sample(message.sample)))
            elif kind == "evaluate":  # `meshdbg compare`: pdb's output and state stay untouched
                remote.send(pb.WorkerMessage(evaluation=evaluate(
                    message.evaluate, self.curframe, getattr(self, "curframe_locals", None))))
            elif kind is None:
                sys.stderr.write(f"meshdbg: lost the debugger at {remote.addr}; continuing\n")
                self._remote = None
                return "continue\n"

    # ---- completion -------------------------------------------------------------------

    def complete_remote(self, request: pb.CompleteRequest) -> list[str]:
        """What Tab would offer at this point of `line`, computed in the stopped frame."""
        stripped = len(request.line) - len(request.line.lstrip())
        line = request.line.lstrip()
        begidx, endidx = request.begidx - stripped, request.endidx - stripped
        try:
            if begidx <= 0:
                names = self.completenames(request.text, line, begidx, endidx)
                return sorted(set(names) | set(self._complete_expression(request.text, line, begidx, endidx)))
            command, _, _ = self.parseline(line)
            complete = getattr(self, "complete_" + command, self._complete_expression) if command else self._complete_expression
            return list(complete(request.text, line, begidx, endidx) or [])
        except Exception:  # completion is best effort; a failing completer offers nothing
            return []

    # ---- commands that would otherwise touch the worker's own terminal ------------------

    def do_quit(self, arg: str) -> int:
        """q(uit) | exit
        End this debug session. The worker forgets its breakpoints and continues; the rest of
        the mesh is unaffected (remote pdb never kills the worker on quit).
        """
        self.message("meshdbg: session ended; this rank continues with its breakpoints cleared")
        self.clear_all_breaks()
        self._leaving = EndReason.QUIT
        self.set_continue()
        return 1

    do_q = do_exit = do_quit

    def do_EOF(self, arg: str) -> int:
        """EOF
        The client went away: end the session and continue.
        """
        return self.do_quit(arg)

    def do_clear(self, arg: str) -> None:
        if arg:
            return super().do_clear(arg)
        breakpoints = [bp for bp in bdb.Breakpoint.bpbynumber if bp]
        self.clear_all_breaks()
        for bp in breakpoints:
            self.message(f"Deleted {bp}")
        return None

    do_clear.__doc__ = pdb.Pdb.do_clear.__doc__ + "\n(remote: with no argument, clears all without asking)\n"
    do_cl = do_clear

    def do_interact(self, arg: str) -> None:
        """interact
        Not available in a remote session: use `!statement` or `p expression` instead.
        """
        self.error("interact is not available remotely; use !statement or p expression")
