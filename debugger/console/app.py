"""The console application: one PromptSession loop over the control API.

`meshdbg>` runs console commands (meshdbg.debugger.console.commands); once attached, every line goes
to that rank's pdb under a prompt naming it (`(Pdb r2 hosts=1,gpus=0)`). A watcher task keeps
the board (and so the bottom toolbar) current from `ControlClient.watch()` and announces new
stops, exits and crashes above the line being typed (print_formatted_text goes through
run_in_terminal while the prompt runs). Each command runs as a task that Ctrl-C cancels, or,
for a rank busy in pdb, interrupts; the console itself only ends on quit or Ctrl-D. When the
server goes away the console says so, keeps its prompt, and reconnects (meshdbg.debugger.console.link).

Under `meshdbg run` the console belongs to a Job (meshdbg.debugger.console.job): `stop`, or
Ctrl-C twice within a few seconds at `meshdbg>`, ends the job; quit and Ctrl-D only close the
console until the next stop; the job's end (SIGINT and SIGTERM included) closes it through
prompt_toolkit's own exit, which waits for its cursor-position answers, so none lands in the
shell as `^[[45;1R`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
from typing import Any, Awaitable, Callable, Coroutine

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import create_app_session, get_app_session
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.output import ColorDepth, Output

from meshdbg.debugger.console.above import Hold, output_above_prompt
from meshdbg.debugger.console.attachment import Attachment
from meshdbg.debugger.console.bindings import PastedLines
from meshdbg.debugger.console.board import Board, RankKey, stop_key
from meshdbg.debugger.console.commands import Commands
from meshdbg.debugger.console.completion import ConsoleCompleter
from meshdbg.debugger.console.drawing import OutputDrawing
from meshdbg.debugger.console.highlight import STYLE, pdb_fragments
from meshdbg.debugger.console.job import Job
from meshdbg.debugger.console.link import Link
from meshdbg.debugger.console.prompts import make_prompts, read_line
from meshdbg.debugger.console.terminal import terminal_input
from meshdbg.debugger.console.validation import CommandValidator
from meshdbg.debugger.control import ControlClient
from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.answers import PdbReply
from meshdbg.debugger.format import PDB_ERROR_PREFIX, rank_label, where
from meshdbg.debugger.next_stop import next_stop
from meshdbg.debugger.interruption import BREAK_IN_S, cannot_break_in_yet, not_stopped_yet, why_not_interrupted
from meshdbg.debugger.selection import AttachTarget, thread_session
from meshdbg.wire.errors import ConnectionFailed, MeshdbgError, NoMatchError, ServerStalled, SessionError
from meshdbg.wire.vocabulary import EndReason, State, WatchKind

RETRY_S = 2.0  # how often the watcher tries a lost server again
KEYBOARD_INTERRUPT = "--KeyboardInterrupt--"  # what local pdb prints for Ctrl-C at its prompt


class _Idle(Exception):
    """Raised into the prompt when `exit_when_idle` and no session is open any more."""


class Console:
    """The console's state and loop; commands reach it through the ConsoleActions methods."""

    def __init__(self, client: ControlClient, *, exit_when_idle: bool = False, job: Job | None = None) -> None:
        self.link = Link(client)
        self.board = Board()
        self.commands = Commands(self)
        self.exit_when_idle = exit_when_idle
        self.job = job
        self.attachment: Attachment | None = None
        if job is not None:  # the job's logs leave out what this console shows of the rank's session
            job.showing = lambda: self.attachment.session.rank if self.attachment is not None else None
        self.following: SessionView | None = None  # the rank we let run with `c`: Ctrl-C stops it
        self.hold = Hold()  # news of other ranks, and the ranks' lines under `meshdbg run`, wait in it (`ranks_held`)
        self.synced = False  # the board holds what the server had when we (re)connected
        self._command: Callable[[], None] | None = None  # what Ctrl-C does to the running command
        self._running: asyncio.Task[Any] | None = None  # the running command
        self._drawing: OutputDrawing | None = None  # pdb output being drawn (Ctrl-C may cut it)
        self._shared_held: list[str] = []  # what another client did, come while this console's output was drawn
        self._cut_from: SessionView | None = None  # the session a lost server detached us from (`_back_where_cut`)
        self._tasks: set[asyncio.Task[Any]] = set()
        output = get_app_session().output
        self.color = (ColorDepth.from_env() or output.get_default_color_depth()) != ColorDepth.DEPTH_1_BIT
        self.pasted = PastedLines()  # what a paste of several lines has left to type
        self.console_prompt, self.pdb_prompt = make_prompts(
            self._message, self._toolbar, ConsoleCompleter(self.board, lambda: self.attachment),
            CommandValidator(lambda: self.attachment is None), job is not None, self.pasted)
        self._active: PromptSession[str] = self.console_prompt  # the prompt shown (or last shown)

    # ---- ConsoleActions: what commands use ------------------------------------------

    async def client(self) -> ControlClient:
        return await self.link.ensure()

    def say(self, text: str) -> None:
        self._print([("", text)])

    def ranks_held(self) -> contextlib.AbstractContextManager[None]:
        """While inside, the news of other ranks and their lines under `meshdbg run` wait (a
        moment at most): what this console says of a command that lets ranks run comes before
        their output and their next stops (meshdbg.debugger.console.above)."""
        return self.hold.held()

    async def show_pdb(self, text: str) -> None:
        """pdb's output, highlighted, drawn a piece at a time: Ctrl-C while a long output is
        being drawn stops the drawing (with local pdb's `--KeyboardInterrupt--`), never the rank
        or the job; what the rank did is done either way."""
        await self._drawn(self._new_drawing(), text)

    def _new_drawing(self) -> OutputDrawing:
        return OutputDrawing(lambda fragments, end: self._print(fragments, end=end), self.warn, self.color)

    async def _drawn(self, drawing: OutputDrawing, tail: str) -> None:
        """DRAWING finished with TAIL; the console's Ctrl-C may cut it meanwhile."""
        self._drawing = drawing
        try:
            await drawing.finish(tail)
        finally:
            self._drawing_over()

    def _drawing_over(self) -> None:
        """No output of this console's is being drawn: what others did meanwhile is drawn now."""
        self._drawing = None
        held, self._shared_held = self._shared_held, []
        for text in held:
            self.show_shared(text)

    def show_shared(self, text: str) -> None:
        """What another client did on the attached session (meshdbg.debugger.peers), a few
        lines at a time as they come, highlighted like pdb's own output: drawn at once, or,
        while this console draws an output of its own, right after it. That output came
        first (pdb's reply to this console, which a slow terminal may still be drawing when
        another client's line has run): drawn at once, the other's line and answer would
        land in the middle of it, as one terminal never shows them."""
        if not text.strip():
            return
        if self._drawing is not None:
            self._shared_held.append(text)
        else:
            self._print(pdb_fragments(text, self.color))

    def farewell(self) -> str:
        count = len(self.board.live)
        sessions = f"{count} session{'s' if count != 1 else ''}"
        if self.job is None:
            return f"bye; {sessions} left as they are"
        # A session running a command (`n` over a long loop) pauses again once it ends, with
        # no one attached: not paused yet, and not running away either.
        busy = sum(1 for view in self.board.live.values() if view.state is State.RUNNING)
        return self.job.farewell(sessions, busy)

    async def stop_job(self) -> bool:
        """`stop`: end the `meshdbg run` job, once confirmed if ranks still run; True if stopping."""
        if self.job is None:
            self.say("stop ends a `meshdbg run` job; this console is attached to a server whose ranks "
                     "belong to their own launcher (stop them there)")
            return False
        running = self.board.running()
        if running:
            question = f"{running} rank{'s' if running != 1 else ''} still running; stop the whole job? [y/N] "
            if not await self.confirm(question):
                self.say("not stopped")
                return False
        self.job.stop("stopped from the console")
        self.announce("stopping the job…")
        return True

    async def confirm(self, question: str) -> bool:
        """Ask a yes/no question on a prompt of its own; only y or yes is yes."""
        try:
            answer = await PromptSession[str]().prompt_async(question, handle_sigint=False)
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")

    async def attach(self, target: AttachTarget) -> None:
        client = await self.link.ensure()
        if target.thread:  # one of the rank's threads: its session, by id
            target = AttachTarget(session_id=thread_session(await client.list(), target).id)
        await self.detach()
        shown = self.job is not None  # under `meshdbg run`, which prints every rank's output as it comes
        attachment = await Attachment.open(client, target, self.show_shared, shown)
        if not_stopped_yet(attachment.session):
            await self._wait_for_the_stop(client, attachment)
            attachment = await Attachment.open(client, target, self.show_shared, shown)
        self.attachment, self.following = attachment, None
        self.announce(f"attached to {attachment.label} at {where(attachment.session)}; "
                      f"detach or Ctrl-D leaves it paused")
        await self.show_pdb(attachment.attached.replay.output)
        if attachment.attached.replay.ended:
            await self._attachment_ended(attachment, attachment.attached.replay)
        else:
            attachment.end_watcher = self._spawn(self._watch_attachment(attachment))
        self._refresh()

    async def _wait_for_the_stop(self, client: ControlClient, attachment: Attachment) -> None:
        """`attach` to a session that has not stopped yet: no pdb prompt until it has (one for a
        rank whose interrupt was pending, blocked in C, answered every line "is running, not
        stopped in pdb"). Said when it takes longer than a thread's first prompt does; Ctrl-C
        stops waiting, and says that the rank's interrupt stays pending (it said a cast's
        "ranks already running the command finish it on their own")."""
        await attachment.close()
        stop = asyncio.ensure_future(next_stop(client, attachment.session))
        waiting, cancelling = asyncio.current_task(), self._command
        self._command = lambda: self._stop_waiting(attachment.label, waiting)
        try:
            if not (await asyncio.wait([stop], timeout=BREAK_IN_S))[0]:
                self.announce(f"{attachment.label} has not stopped yet; waiting for its stop (Ctrl-C stops waiting)")
            if not await stop:
                raise SessionError(f"{attachment.label} exited before it stopped")
        finally:
            stop.cancel()
            self._command = cancelling  # (the attach goes on: a Ctrl-C now is the command's again)

    # ---- printing -------------------------------------------------------------------

    def _print(self, fragments: StyleAndTextTuples, end: str = "\n") -> None:
        print_formatted_text(FormattedText(fragments), style=STYLE, end=end)

    def announce(self, text: str) -> None:
        self._print([("class:announce", text)])

    def warn(self, text: str) -> None:
        self._print([("class:warning", text)])

    def _message(self) -> str:
        if self.attachment is None:
            return "meshdbg> "
        session = self.attachment.session
        return self.attachment.prompt(self.board.thread_shown(session))

    def _toolbar(self) -> str:
        parts = [f" {self.board.summary()}"]
        if self.link.lost is not None:
            parts.append("server unreachable")
        if self.attachment is not None:
            parts.append(f"attached: {self.attachment.label}")
        elif self.following is not None:
            parts.append(f"{rank_label(self.following)} running")
        return " │ ".join(parts)

    def _refresh(self) -> None:
        app = self._active.app
        app.invalidate()
        if self._should_leave() and app.is_running and app.future is not None and not app.future.done():
            app.exit(exception=_Idle)

    def _should_leave(self) -> bool:
        if self.job is not None and self.job.ended.is_set():
            return True
        return self.exit_when_idle and self.synced and self.board.idle and self.attachment is None

    async def _leave_when_the_job_ends(self, job: Job) -> None:
        await job.ended.wait()
        if self._running is not None:
            self._running.cancel()  # the job is over: stop waiting for its ranks
        self._refresh()

    # ---- the loop ---------------------------------------------------------------------

    async def run(self, attach_rank: int | None = None, attach_thread: str = "") -> int:
        """Prompt, run, repeat until quit, Ctrl-D at meshdbg>, or (exit_when_idle) idle."""
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGINT)
        try:
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread
            previous = None
        self._spawn(self._watch())
        if self.job is not None:
            self._spawn(self._leave_when_the_job_ends(self.job))
        try:
            if attach_rank is not None:
                await self._run(self._attach_at_start(AttachTarget(rank=attach_rank, thread=attach_thread)))
            while not self._should_leave():
                self._active = self.pdb_prompt if self.attachment is not None else self.console_prompt
                try:
                    line = await read_line(self._active, self.pasted)
                except KeyboardInterrupt:
                    if await self._run(self._on_ctrl_c()):
                        break
                    continue
                except EOFError:
                    if self.attachment is None:
                        self.say(self.farewell())
                        return 0
                    if not self.attachment.at_pdb_prompt:  # `interact`, `commands`: Ctrl-D ends their input
                        await self._run(self._line("", eof=True), attached=True)
                        continue
                    await self.detach()
                    continue
                except _Idle:
                    break
                if self.job is not None:
                    self.job.line_entered()
                if await self._run(self._line(line), attached=self.attachment is not None):
                    break
            return 0
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.detach(quiet=True)
            await self.link.close()
            if self.job is not None:
                self._leave_the_job(self.job)
                self.job.take_signals()  # no moment when Ctrl-C would reach nobody
            elif previous is not None:
                loop.remove_signal_handler(signal.SIGINT)
                signal.signal(signal.SIGINT, previous)

    def _leave_the_job(self, job: Job) -> None:
        """Closing under `meshdbg run` while the job runs on: the rank we let run is the next
        Ctrl-C's (meshdbg.debugger.console.job); say so when the console closed by itself."""
        job.following = self.following.rank if self.following is not None and not job.closed_by_user else None
        if job.ended.is_set() or job.closed_by_user or not self.board.running():
            return  # (no rank runs: the job is ending, and `meshdbg run` says how)
        then = (f"Ctrl-C interrupts {rank_label(self.following)}, a second one stops the job"
                if self.following is not None else "Ctrl-C stops the job")
        self.announce(f"no rank is paused any more; the console closes until the next stop ({then})")

    async def _attach_at_start(self, target: AttachTarget) -> None:
        """Open in the rank's pdb; under `meshdbg run`, a rank already running on is no error."""
        try:
            await self.attach(target)
        except NoMatchError:
            if self.job is None:
                raise

    async def _line(self, line: str, eof: bool = False) -> bool:
        """One typed line: a console command, or (attached) a pdb command for that rank."""
        self._cut_from = None  # (the person went on: no attach again on their behalf)
        attachment = self.attachment
        if attachment is None:
            return await self.commands.run(line)
        if line.strip() == "detach":
            await self.detach()
            return False
        drawing = self._drawing = self._new_drawing()  # the output is drawn as it comes
        with attachment.line_under_way(), self.ranks_held():  # (a `c`: "rank 0 continued" before its output)
            try:
                reply = await attachment.send(line, eof=eof, on_output=drawing.add)
            except BaseException as failure:
                drawing.cancel()
                self._drawing_over()
                if isinstance(failure, asyncio.CancelledError):
                    await self.detach(quiet=True)
                raise
            await self._drawn(drawing, reply.output)
            if reply.ended:
                await self._attachment_ended(attachment, reply)
        return False

    async def _run(self, work: Coroutine[Any, Any, Any], attached: bool = False) -> bool:
        """Run one command as a task Ctrl-C can reach; report its errors in one line."""
        task = asyncio.ensure_future(work)
        self._command = (lambda: self._interrupt_attached(task)) if attached else (lambda: self._cancel(task))
        self._running = task
        try:
            await asyncio.wait([task])
        finally:
            self._command = self._running = None
            task.cancel()
        if task.cancelled():
            return False
        failure = task.exception()
        if failure is not None:
            self._report(failure)
        self._refresh()
        return bool(task.result()) if failure is None else False

    def _report(self, failure: BaseException) -> None:
        """A failed command or background step in one line; anything but a MeshdbgError is a bug."""
        if isinstance(failure, ConnectionFailed):
            self.link.mark_lost(failure)
            self.warn(f"meshdbg: {failure} — the next command tries again")
        elif isinstance(failure, MeshdbgError):
            self._print([("class:error", f"{PDB_ERROR_PREFIX}{failure}")])
        else:
            raise failure

    # ---- Ctrl-C -----------------------------------------------------------------------

    def _on_sigint(self) -> None:
        """SIGINT while no prompt reads keys (the terminal's own Ctrl-C): once the console is
        closing under `meshdbg run` (quit, Ctrl-D), the job's, as it would be a moment later;
        else it cuts the output being drawn (reaching its command too while that runs on), or
        reaches the running command. With no command (one just ended, the prompt is coming
        back) it is that command's, too late to matter, and does nothing: never the job's.
        The rest of a paste is not typed, as a terminal's Ctrl-C drops the input not yet read."""
        self.pasted.clear()
        if self.job is not None and self.job.closed_by_user:
            self.job.stop("interrupted")
        elif self._drawing is not None and self._drawing.drawing:
            self._drawing.cut()
            if not self._drawing.ended and self._command is not None:
                self._command()  # its command runs on (a flood of output): interrupted too, as in local pdb
        elif self._command is not None:
            self._command()

    def _stop_waiting(self, label: str, task: asyncio.Task[Any] | None) -> None:
        self.warn(f"stopped waiting for {label}; its interrupt stays pending: it stops at its next Python line")
        if task is not None:
            task.cancel()

    def _cancel(self, task: asyncio.Task[Any]) -> None:
        self.warn("cancelled (ranks already running the command finish it on their own)")
        task.cancel()

    def _interrupt_attached(self, task: asyncio.Task[Any]) -> None:
        """Ctrl-C while the attached rank runs a command: interrupt it, as local pdb would."""
        if self.attachment is None:  # detached meanwhile: nothing left to interrupt
            task.cancel()
            return
        self._spawn(self._run_quietly(functools.partial(self._break_in, self.attachment, task)))

    async def _break_in(self, attachment: Attachment, task: asyncio.Task[Any]) -> None:
        """Stop the command at the rank's next Python line; if it cannot within BREAK_IN_S
        (blocked in C: a sleep, a socket, a collective), say where it is and give the prompt
        back: the rank comes back to it, with the command's output, once it stops."""
        try:
            running = await (await self.link.ensure()).break_in(attachment.session.id)
        except SessionError:
            return  # the command finished meanwhile
        await asyncio.wait([task], timeout=BREAK_IN_S)
        if task.done():
            return
        self.following = attachment.session
        task.cancel()
        self.warn(f"{cannot_break_in_yet(attachment.label, running)} and comes back here with the command's output; "
                  f"Ctrl-C on an empty line asks again")

    async def _on_ctrl_c(self) -> bool:
        """Ctrl-C at the prompt: pdb's `--KeyboardInterrupt--` when attached (the session stays,
        as in local pdb; detach or Ctrl-D leave it), or stop the rank we let run (which then comes
        back here, as `following` brings it back at its next stop); under `meshdbg run`, say how
        to end the job, and end it at a second Ctrl-C soon after. True: leave."""
        if self.attachment is not None:
            self._print([("", KEYBOARD_INTERRUPT)])
        elif self.following is not None:
            await self._interrupt(self.following)
        elif self.job is None:
            self.say("(quit or Ctrl-D leaves the console; sessions stay as they are)")
        elif (explanation := self.job.ctrl_c()) is not None:
            self.say(explanation)
        else:
            self.announce("stopping the job…")
            return True
        return False

    async def _interrupt(self, session: SessionView) -> None:
        client = await self.link.ensure()
        if session.rank in await client.interrupt(str(session.rank)):
            self.announce(f"interrupting {rank_label(session)}…")
        else:
            self.warn(f"{rank_label(session)} could not be interrupted: {await why_not_interrupted(client, session)}")

    # ---- attachment -------------------------------------------------------------------

    async def detach(self, quiet: bool = False) -> None:
        """Leave the attached rank paused (its session stays open on the server)."""
        attachment, self.attachment = self.attachment, None
        if attachment is None:
            return
        if self.job is not None:
            self.job.left(attachment.session.rank)
        if attachment.end_watcher is not None and attachment.end_watcher is not asyncio.current_task():
            attachment.end_watcher.cancel()  # (the watcher itself detaches when the session ends)
        await attachment.close()
        if not quiet:
            self.announce(f"detached from {attachment.label}; it stays paused")
        self._refresh()

    async def _watch_attachment(self, attachment: Attachment) -> None:
        reply = await attachment.wait_ended()
        # (After a line under way: woken by the same end, this said "detached" above the output
        # that line still drew, a console cut off mid-output; once that line said it, this is
        # no longer the attachment, and says nothing.)
        await attachment.wait_idle()
        await self._attachment_ended(attachment, reply)

    async def _attachment_ended(self, attachment: Attachment, reply: PdbReply) -> None:
        """The attached session is over (continued here or elsewhere, or gone): say so."""
        if self.attachment is not attachment:
            return
        await self.detach(quiet=True)
        if reply.reason is EndReason.CONTINUED:
            self.following = attachment.session
            self.announce(f"{attachment.label} continued; back at meshdbg> "
                          f"(it comes back here at its next stop; Ctrl-C on an empty line stops it now)")
        elif reply.detached:  # the attach broke, not the session (it said "session ended")
            broken = attachment.attached.broken_by
            if isinstance(broken, ServerStalled) and not self._typing():
                # Back already: the same stop again, whose replay shows whether the line under
                # way ran (a stall of a few seconds left the person at meshdbg>, blamed).
                self.warn(f"{reply.reason}: attaching to {attachment.label} again")
                self._attach_in_background(AttachTarget(session_id=attachment.session.id))
                return
            if isinstance(broken, ConnectionFailed):  # the server went away: back to it once it is (`_watch`)
                self._cut_from = attachment.session
            self.warn(f"detached from {attachment.label}: {reply.reason}; back at meshdbg>")
        else:
            self.warn(f"{attachment.label}: session ended ({reply.reason}); back at meshdbg>")

    # ---- the watcher ------------------------------------------------------------------

    async def _watch(self) -> None:
        """Keep the board current and announce changes; survive the server going away.

        The stream replays the live sessions, says `synced`, then reports changes; every
        (re)connection starts the board afresh. At first the replayed sessions are known
        already, not news; after a lost server, a stop the board did not hold before is news
        (it happened while we were away, perhaps on a restarted server).
        """
        dropped = said_lost = False
        while True:
            try:
                client = await self.link.ensure()
                known = self.board.stops() if dropped else None  # None: every replayed stop is known
                self.board.reset()
                self.synced = False
                replayed: list[SessionView] = []
                async for kind, session, reason in client.watch(exits=True):
                    if self.synced:
                        self._on_event(kind, session, reason)
                    elif kind is WatchKind.SYNCED:
                        self.board.know_workers(await client.workers())
                        self.synced = True
                        dropped = False
                        reconnected, said_lost = said_lost, False
                        if reconnected:
                            self.announce(f"reconnected to the server at {client.connection.addr}")
                        for view in replayed:
                            if known is None or stop_key(view) in known:
                                self.board.know(view)
                            else:
                                self._on_event(WatchKind.OPENED, view, None)
                        if reconnected:
                            self._back_where_cut()
                        self._refresh()
                    elif isinstance(session, SessionView):  # the replay: sessions only
                        replayed.append(session)
                raise client.went_away()
            except MeshdbgError:
                dropped = True
                # Only this console's connection may have gone (the server's keepalive closed
                # it while the console was stopped, Ctrl-Z, cut off mid-output): then the watch
                # starts again with nothing to say (it said "the server went away", which had
                # not). Asked without waiting for the channel: a server that is gone is said
                # to be at once, not after CONNECT_TIMEOUT_S.
                if self.link.lost is None and not await self.link.client.answers():
                    silence = await self.link.client.silence()
                    self.link.mark_lost(silence)
                    self.warn(f"meshdbg: {silence} — retrying every {RETRY_S:.0f} s")
                    said_lost = True
                self._refresh()
            try:
                await asyncio.wait_for(self.link.reconnected.wait(), RETRY_S)
            except TimeoutError:
                pass

    def _back_where_cut(self) -> None:
        """Back at the server after it was lost (stalled, restarted): attach again to the stop
        its loss detached this console from, if it is still paused and nothing else was typed
        since; the replay shows whether the line under way then ran. (It left the person at
        meshdbg>, their line's fate unknown, after a stall of a few seconds.)"""
        cut, self._cut_from = self._cut_from, None
        if cut is None or self.attachment is not None or self._typing():
            return
        again = next((view for view in self.board.live.values()
                      if stop_key(view) == stop_key(cut) and view.state is State.STOPPED), None)
        if again is not None:
            self._attach_in_background(AttachTarget(session_id=again.id))

    def _attach_in_background(self, target: AttachTarget) -> None:
        """Attach to `target` on the console's behalf (back to a stop, a rank let run that
        stopped again), as a background step whose failure is one line."""
        self._spawn(self._run_quietly(functools.partial(self.attach, target)))

    def _on_event(self, kind: WatchKind, session: SessionView | WorkerView, reason: EndReason | None) -> None:
        note = self.board.apply(kind, session, reason)
        key = (session.name, session.rank)
        if kind is WatchKind.EXITED:
            if self._is_following(key):
                self.following = None
        elif kind is not WatchKind.CLOSED and session.state is State.STOPPED:
            if self._is_following(key):
                self.following = None
                if self.attachment is None and not self._typing():
                    # As local pdb after `c`: the rank you let run comes back to your prompt
                    # when it stops again, unless you have started typing something else.
                    self._attach_in_background(AttachTarget(rank=session.rank, name=session.name, following=True))
                else:
                    note = (note or f"{rank_label(session)} stopped at {where(session)}") + \
                        f" — attach {session.rank} to debug it again"
        if kind is WatchKind.CLOSED and reason is not EndReason.CONTINUED and self._is_following(key):
            self.following = None
        if note:
            self.hold.later(lambda: self.announce(note), len(note))
        self._refresh()

    def _typing(self) -> bool:
        """Whether the person has typed something at the prompt reading keys now. Between two
        prompts (the `c` just done, `meshdbg>` not yet drawn) nobody is: the last prompt's
        buffer still holds the line it took, which is not a line being typed."""
        return self._active.app.is_running and bool(self._active.default_buffer.text)

    def _is_following(self, key: RankKey) -> bool:
        return self.following is not None and (self.following.name, self.following.rank) == key

    async def _run_quietly(self, step: Callable[[], Awaitable[Any]]) -> None:
        """A background step whose failure is a one-line message, never a traceback; a rank
        gone again before we got to it is no failure (its end is announced on its own). The
        step is made only once its task runs: one cancelled before it ran (the console closing
        as its rank stopped again) left an attach never awaited, and Python said so on the
        console in a RuntimeWarning."""
        try:
            await step()
        except NoMatchError:
            pass
        except MeshdbgError as exc:
            self._report(exc)

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


async def run_console(client: ControlClient, *, attach_rank: int | None = None, attach_thread: str = "",
                      exit_when_idle: bool = False, job: Job | None = None, input: Input | None = None,
                      output: Output | None = None) -> int:
    """Run the interactive console on `client` until quit; returns an exit code.

    `attach_rank` opens it attached to that rank (`attach_thread`: in that thread, by name or id);
    `exit_when_idle` returns once no session is
    open any more (`meshdbg run` goes back to its logs then); `job` is the `meshdbg run` job it
    can stop. `input`/`output` replace the terminal (stdin read as meshdbg.debugger.console.terminal
    says), so tests can drive it (prompt_toolkit's create_pipe_input, DummyOutput).
    """
    with create_app_session(input=input if input is not None else terminal_input(), output=output):
        console = Console(client, exit_when_idle=exit_when_idle, job=job)  # the terminal's output made first
        with output_above_prompt(console.hold) if job is not None else contextlib.nullcontext():  # the ranks' lines
            return await console.run(attach_rank, attach_thread)
