"""`meshdbg attach RANK` without a console: line-based pdb over the control API.

Reads lines from stdin (with the terminal's line editing when it is one) until `detach`, EOF,
or the rank is gone; useful from scripts and dumb terminals. As local pdb does, it follows
the rank across `c`: it waits for the rank's next stop, with no prompt shown meanwhile,
attaches there and goes on, or ends when the rank exits; a script's stdin is followed only
while it has another line (at its end the attach ends with it). However the session ends while a line is being read (its worker
dies, another client continues it, the server stops), it ends at once with one line and an
exit status. Off a terminal the event loop reads file descriptor 0 itself, never through
sys.stdin's buffer; on one, `input()` runs in a daemon thread, so nothing waits for it at exit.
Ctrl-C while a line runs breaks into its command, as in local pdb, and after `c` it
interrupts the rank; at the prompt, or a second time while a command cannot break in yet or
the rank is being interrupted, it leaves (the session stays as it is).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import sys
import termios
import threading
from typing import Awaitable

from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.attached_session import AttachedSession
from meshdbg.debugger.next_stop import next_stop
from meshdbg.debugger.interruption import BREAK_IN_S, cannot_break_in_yet, not_stopped_yet, why_not_interrupted
from meshdbg.debugger.peers import SharedLines
from meshdbg.debugger.views import SessionView
from meshdbg.debugger.answers import PdbReply
from meshdbg.debugger.format import rank_label
from meshdbg.wire.errors import MeshdbgError, ServerStalled
from meshdbg.wire.vocabulary import EndReason

DETACH_WORDS = ("detach",)


def _shown(reply: PdbReply) -> str:
    """What a reply shows: its output, and why the session ended unless it was continued, or
    why this attach did when its stream broke and the session may live on (a text reason)."""
    text = reply.output if reply.output.endswith("\n") or not reply.output else reply.output + "\n"
    if reply.ended and reply.reason is not EndReason.CONTINUED:
        text += f"meshdbg: {'detached' if reply.detached else 'session ended'} ({reply.reason})\n"
    return text


class _Stdin:
    """Lines of stdin for the event loop, one read at a time: a read still under way when its
    session ended is the one the next caller gets, so no line is lost to a second reader.

    Off a terminal the loop reads file descriptor 0 itself once it is readable (a regular file
    cannot be polled and never makes a read wait: it is read at once), and goes on watching it
    from one line to the next while what it read holds no whole line: a person's next line
    finds the reader in place (issue 22: no watch set up and torn down per `p x`), and input
    sent ahead waits in the pipe, not in memory. On a terminal a daemon thread runs `input()`
    for each line asked for. Before (issue 22), a thread started per line put a thread
    hand-off and `Thread.start`'s wait (0.1–0.8 ms) into every `p x`."""

    def __init__(self) -> None:
        self._unread = b""  # bytes read past the last line (off a terminal)
        self._watching: asyncio.AbstractEventLoop | None = None  # the loop watching file descriptor 0
        self._at_end = False  # file descriptor 0 reached its end
        self._terminal: bool | None = None  # stdin and stdout are a terminal (asked once: a system call each)
        self._in_flight: asyncio.Future[str | None] | None = None
        self._asked: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[str | None], str]] = (
            queue.SimpleQueue())
        self._reader: threading.Thread | None = None
        self._terminal_mode: list | None = None  # the terminal's settings before readline changed them

    def line(self, prompt: str, before: str = "") -> asyncio.Future[str | None]:
        """The next line; `before` (a reply's output) is written first, with the prompt off a terminal."""
        if self._in_flight is not None and not self._in_flight.done():
            if before:  # (the read under way drew its prompt above this: the prompt again below it)
                _show_text(before + prompt)
            return self._in_flight
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str | None] = loop.create_future()
        self._in_flight = future
        if self.terminal:  # input() edits lines without sys.stdin's buffer
            if before:
                _show_text(before)
            if self._reader is None:
                with contextlib.suppress(termios.error):
                    self._terminal_mode = termios.tcgetattr(0)
                self._reader = threading.Thread(target=self._input_when_asked, daemon=True, name="meshdbg-stdin")
                self._reader.start()
            self._asked.put((loop, future, prompt))
            return future
        _show_text(before + prompt)
        if b"\n" in self._unread or self._at_end:
            _settle(future, self._take())
            return future
        if self._watching is not loop:
            try:
                loop.add_reader(0, self._readable, loop)
            except OSError:  # a regular file or /dev/null (always readable, not pollable), or no stdin at all
                _settle(future, self._read_fd())
                return future
            self._watching = loop
        return future

    @property
    def terminal(self) -> bool:
        """Whether stdin and stdout are a terminal (a person types the lines)."""
        if self._terminal is None:
            self._terminal = sys.stdin.isatty() and sys.stdout.isatty()
        return self._terminal

    def end_prompt_line(self) -> None:
        """After a line that leaves (`detach`): off a terminal, end the prompt's line, which
        no echoed Enter ended (as pdb ends it at the end of its input); on one, the person's
        Enter did."""
        if not self.terminal:
            _show_text("\n")

    def stop_watching(self) -> None:
        """No more lines are wanted: what comes on file descriptor 0 from now on stays there,
        for whoever reads it next (the next command of a shell script sharing the pipe); a
        terminal gets back the settings readline found. (Leaving at a prompt, by Ctrl-C, left
        readline's own in place, echo and line mode off, with its line still being read: the
        shell's next program could not read a line.)"""
        if self._watching is not None:
            self._watching.remove_reader(0)
            self._watching = None
        if self._terminal_mode is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(0, termios.TCSADRAIN, self._terminal_mode)

    def _input_when_asked(self) -> None:
        """The terminal's reader thread: for each request, a line (None at EOF) handed to the asking loop.
        With readline loaded, as local pdb loads it on a terminal: arrow keys edit the line and
        recall earlier ones, instead of being typed in as `^[[A`."""
        import readline  # noqa: F401 - loading it is what gives input() line editing and history
        while True:
            loop, future, prompt = self._asked.get()
            try:
                line: str | None = input(prompt)
            except (EOFError, OSError, ValueError, KeyboardInterrupt):
                line = None
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for the line
                loop.call_soon_threadsafe(_settle, future, line)

    def _readable(self, loop: asyncio.AbstractEventLoop) -> None:
        """File descriptor 0 has bytes (or its end): the line asked for once a whole one is in.
        The watch ends at the end of the input, or when what is read holds a line nobody
        asked for yet (the next `line` watches again once it is taken)."""
        try:
            chunk = os.read(0, 65536)
        except OSError:
            chunk = b""
        self._unread += chunk
        self._at_end = not chunk
        if chunk and b"\n" not in self._unread:
            return  # the rest of the line is still to come
        future = self._in_flight
        if future is not None and not future.done():
            _settle(future, self._take())
        if self._at_end or b"\n" in self._unread:
            loop.remove_reader(0)
            self._watching = None

    def _read_fd(self) -> str | None:
        """The next line of file descriptor 0, read at once; None at EOF or without one."""
        try:
            while b"\n" not in self._unread:
                chunk = os.read(0, 65536)
                if not chunk:
                    break
                self._unread += chunk
        except OSError:
            pass
        return self._take()

    def _take(self) -> str | None:
        """The first line read, without its newline; what is left when no newline is (the end of
        the input), or None when nothing is."""
        if b"\n" in self._unread:
            line, _, self._unread = self._unread.partition(b"\n")
            return line.removesuffix(b"\r").decode(errors="replace")
        rest, self._unread = self._unread, b""
        return rest.decode(errors="replace") if rest else None


def _settle(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)


_stdin = _Stdin()
def _show_text(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def read_line(prompt: str, before: str = "") -> asyncio.Future[str | None]:
    """The next line of stdin (None at EOF), read by a daemon thread; `before` (a reply's
    output) is written with the prompt, in one write."""
    return _stdin.line(prompt, before)


class _CtrlC:
    """Ctrl-C in the plain attach, one handler while it runs (none set per line: issue 22).
    While a line runs, the first breaks into its command (its reply then says
    `KeyboardInterrupt`, as local pdb's); when the rank cannot break in within BREAK_IN_S
    (blocked in C), that is said, and the next one leaves; more before that wait for the first.
    At the prompt it leaves, as the verb's own handler (asyncio.Runner's) does: the session stays."""

    def __init__(self, client: ControlClient) -> None:
        self._client = client
        self._loop = asyncio.get_running_loop()
        self._previous = signal.getsignal(signal.SIGINT)
        self._running: tuple[asyncio.Future[None], SessionView] | None = None  # a line's end, its session
        self._breaking: asyncio.Task[None] | None = None
        self._leave_next = False
        self._following: SessionView | None = None  # the rank let run with `c`, waited for (`follow`)

    def __enter__(self) -> "_CtrlC":
        if self._previous is not signal.SIG_IGN:  # started with SIGINT ignored (in the background): it stays so
            self._loop.add_signal_handler(signal.SIGINT, self._pressed)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop.remove_signal_handler(signal.SIGINT) and self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)  # (None: one not set from Python; Python's own stays then)

    async def run(self, attached: AttachedSession, line: str, eof: bool = False) -> PdbReply:
        """pdb's reply to `line` (`eof`: the end of the input of what reads it instead), its
        output shown as it comes (sent from this task, its end told by a future: no task made
        per line, issue 22)."""
        ended: asyncio.Future[None] = self._loop.create_future()
        self._running, self._breaking, self._leave_next = (ended, attached.session), None, False
        try:
            return await attached.send(line, eof=eof, on_output=_show_text)
        finally:
            ended.set_result(None)
            self._running = None
            if self._breaking is not None:
                self._breaking.cancel()

    async def follow(self, session: SessionView, stop: Awaitable[bool]) -> bool:
        """Wait for `stop` (the rank's next stop after `c`: True; its end: False) as local pdb
        waits after `c`: the first Ctrl-C interrupts the rank, which stops where it runs (and
        the wait ends there); one more leaves."""
        self._following, self._breaking, self._leave_next = session, None, False
        try:
            return await stop
        finally:
            self._following = None
            if self._breaking is not None:
                self._breaking.cancel()

    def _pressed(self) -> None:
        if self._following is not None and not self._leave_next:
            self._leave_next = True
            self._breaking = self._loop.create_task(self._interrupt(self._following))
        elif self._running is None or self._leave_next:
            if callable(self._previous):
                print(flush=True)  # off the half-typed line, for the verb's `meshdbg: interrupted`
                self._previous(signal.SIGINT, None)
        elif self._breaking is None:
            self._breaking = self._loop.create_task(self._break_in(*self._running))

    async def _interrupt(self, session: SessionView) -> None:
        """Ask the rank we follow to stop in pdb where it runs; say so (or why not)."""
        label = rank_label(session)
        try:
            if session.rank in await self._client.interrupt(str(session.rank)):
                said = f"interrupting {label}"
            else:
                said = f"{label} could not be interrupted: {await why_not_interrupted(self._client, session)}"
        except MeshdbgError as exc:
            said = f"cannot interrupt {label}: {exc}"
        print(f"\nmeshdbg: {said}; Ctrl-C again leaves", flush=True)

    async def _break_in(self, ended: asyncio.Future[None], session: SessionView) -> None:
        try:
            why = cannot_break_in_yet(rank_label(session), await self._client.break_in(session.id))
        except MeshdbgError as exc:  # the command ended meanwhile (its reply is on its way), or no answer in time
            why = str(exc)
        await asyncio.wait([ended], timeout=BREAK_IN_S)
        if not ended.done():
            self._leave_next = True
            print(f"\nmeshdbg: {why}; Ctrl-C again leaves (the session stays)", flush=True)


async def attach_lines(client: ControlClient, rank: int | None = None, session_id: int | None = None) -> int:
    """Drive one rank line by line; the session stays paused when we detach."""
    with _CtrlC(client) as ctrl_c:
        try:
            return await _attach_lines(client, ctrl_c, rank, session_id)
        finally:
            _stdin.stop_watching()


async def _attach_lines(client: ControlClient, ctrl_c: _CtrlC, rank: int | None, session_id: int | None) -> int:
    pending: str | None = None  # a line read after `c`, for the rank's next stop
    again: int | None = None  # the stop to attach to again: its server stalled under the attach
    while True:
        async with client.attach(rank=rank, session_id=again or session_id,
                                 on_shared=SharedLines(_show_text)) as attached:
            session = attached.session
            if not_stopped_yet(session):  # an interrupt of a rank blocked in C, pending: no pdb yet
                ended: PdbReply | int | None = None
            else:
                print(f"meshdbg: attached to rank {session.rank} ({session.coords_text or 'no coords'}, "
                      f"{session.thread}); `detach` or Ctrl-D leaves it paused", flush=True)
                ended = await _session_lines(attached, ctrl_c, pending)
                if not attached.replay.ended:
                    pending = None  # pdb had it
        again = None
        if isinstance(ended, int):
            return ended
        if ended is not None and _server_stalled(attached):
            # The stop is still there: its replay shows whether the line under way ran (this
            # attach said the server "went away" and left the rank it drove).
            print(f"meshdbg: attaching to {rank_label(session)} again", flush=True)
            again = session.id
            continue
        if ended is None:
            print(f"meshdbg: {rank_label(session)} has not stopped yet; waiting for its stop (Ctrl-C interrupts it)",
                  flush=True)
        elif ended.reason is not EndReason.CONTINUED or session_id is not None:
            return _exit_status(ended)
        elif _stdin.terminal:  # as local pdb after `c`: no prompt until the rank stops again
            print(f"meshdbg: {rank_label(session)} continued; waiting for its next stop (Ctrl-C interrupts it)",
                  flush=True)
        else:  # a script goes on with the rank only if it has another line for it
            pending = _for_pdb(await read_line(ended.prompt or "(Pdb) "))
            if pending is None:
                return 0
            print(f"meshdbg: {rank_label(session)} continued; waiting for its next stop", flush=True)
        if not await ctrl_c.follow(session, next_stop(client, session)):
            print(f"meshdbg: {rank_label(session)} exited; nothing more to attach to", flush=True)
            return 0
        rank = session.rank


async def _session_lines(attached: AttachedSession, ctrl_c: _CtrlC, pending: str | None) -> PdbReply | int:
    """Lines to the attached session's pdb, starting with `pending` if given, until it ends
    (its last reply) or the attach does (the exit status: Ctrl-D, `detach`, or the session
    ended elsewhere while we waited for a line; the attach's last reply when its server
    stalled under it)."""
    reply = attached.replay
    shown = _shown(reply)  # written with the next prompt: one write a command (issue 22)
    ended_input = False
    while not reply.ended:
        if pending is None:
            line = await _line_unless_ended(reply.prompt or "(Pdb) ", attached.ending, shown)
            if isinstance(line, PdbReply):
                return _ended_elsewhere(attached, line)
        else:
            line, pending = pending, None
            _show_text(f"{shown}{reply.prompt or '(Pdb) '}{line}\n")
        shown = ""
        if line is None and not reply.prompt_kind.pdbs_own and not ended_input:
            print(flush=True)  # Ctrl-D at `>>> ` or `(com) `: the end of that input only, as in local pdb
            reply = await ctrl_c.run(attached, "", eof=True)
            shown, ended_input = _shown(reply), True
            continue
        ended_input = False  # (one end of input a time: a prompt that stays after it is left with Ctrl-D)
        line = _for_pdb(line)
        if line is None:
            return 0
        reply = await ctrl_c.run(attached, line)
        shown = _shown(reply)
    _show_text(shown)
    return reply


def _for_pdb(line: str | None) -> str | None:
    """`line` when it goes to pdb; None when it ends the attach: the end of the input (its
    prompt's line ended, as pdb ends it) or `detach`."""
    if line is None:
        print()
        return None
    if line.strip() in DETACH_WORDS:
        _stdin.end_prompt_line()
        return None
    return line


def _ended_elsewhere(attached: AttachedSession, reply: PdbReply) -> PdbReply | int:
    """Say in one line why the session ended while we waited for input; the exit status:
    0 when its rank runs on (another client continued it), 1 when it or the server is gone;
    the reply itself when only the attach broke, its server stalled (attached to again)."""
    session = attached.session
    _show_text(_shown(reply))  # its output, and `session ended (why)` unless it was continued
    if _server_stalled(attached):
        return reply
    if reply.reason is EndReason.CONTINUED:
        print(f"meshdbg: {rank_label(session)} was continued by another client; detached", flush=True)
        return 0
    return _exit_status(reply)


def _server_stalled(attached: AttachedSession) -> bool:
    """The attach broke because its server stalled, not the session: the stop is still there."""
    return isinstance(attached.broken_by, ServerStalled)


def _exit_status(ended: PdbReply) -> int:
    """How the attach exits once its session ended: 0 when the rank runs on (continued, quit),
    1 when it or the server is gone."""
    server_gone = ended.reason is EndReason.SERVER_STOPPED
    return 0 if isinstance(ended.reason, EndReason) and ended.reason.rank_runs_on and not server_gone else 1


async def _line_unless_ended(prompt: str, ending: asyncio.Future[PdbReply], before: str = "") -> str | None | PdbReply:
    """The next stdin line (`before` written with its prompt), or the session's final reply if
    it ends first (its worker died). Neither future is cancelled on any way out (a read still
    under way is the next caller's), and no task is made per line (issue 22)."""
    line = read_line(prompt, before)
    if not line.done():
        await asyncio.wait((line, ending), return_when=asyncio.FIRST_COMPLETED)
    if line.done():
        return line.result()
    print(flush=True)
    return ending.result()
