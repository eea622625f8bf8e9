"""`PdbWrapper`: pdb whose input and output travel over a meshdbg session stream.

It overrides only the seams (DESIGN §4): pdb's stdin and stdout, the point where pdb leaves
(continue and quit end the session instead of killing the worker), the frames it may show
or stop in (meshdbg's own are hidden, see meshdbg.worker.frames), and the few commands that
would read the worker's own terminal. Stepping, breakpoints and evaluation stay in pdb/bdb.
Everything pdb writes is buffered and sent together with the next read request, so one
command costs one round trip.

One session per thread at a time, as local pdb has one terminal: a `breakpoint()` reached
while this thread's pdb runs a command (`n`, `s`, `r`, `until` onto the line) continues in
the same session, with a fresh pdb as local `pdb.set_trace()` makes (`hand_over`), so the
command returns with the new position. An interrupt from the server breaks into the running
command the way local pdb's SIGINT handler does (`_on_interrupt`).
"""

from __future__ import annotations

import bdb
import enum
import pdb
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import IO, Any, Callable, MutableMapping, cast

from meshdbg.wire.environment import READRC
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.text import fit_reply, wire_text
from meshdbg.wire.vocabulary import EndReason, PromptKind
from meshdbg.worker.frames import (FrameWithLocals, innermost_user_frame, is_internal, is_meshdbg_call,
                                   is_outermost_user_frame)
from meshdbg.worker.interact import interact
from meshdbg.worker.notices import say, say_once, setting
from meshdbg.worker.output import StreamedOutput
from meshdbg.worker.queries import answer, forget_stop, prompt_kind, standing, wire_frame
from meshdbg.worker.remote import RemoteSession
from meshdbg.worker.signal_hold import interrupt, program_handler
from meshdbg.worker.stop_opening import OPENING
from meshdbg.worker.values import compiled_expression

SessionOpener = Callable[[], RemoteSession]
INTERRUPTED = "\nProgram interrupted. (Use 'cont' to resume)."  # local pdb's SIGINT message
COMMAND_START_S = 1.0  # the longest an interrupt waits for pdb's thread to start a command that arrived


_thread_state = threading.local()


def stop_with_header(debugger: pdb.Pdb, frame: FrameType, header: str | None) -> None:
    """`debugger` stops at `frame`, printing `header` first, as `pdb.set_trace(header=...)`
    (what `breakpoint(header=...)` calls locally)."""
    if header is not None:
        debugger.message(header)
    debugger.set_trace(frame)


def _thread_debugger(session_is: Callable[[RemoteSession], bool]) -> "PdbWrapper | None":
    """The calling thread's pdb, if its session is as `session_is` says."""
    debugger = getattr(_thread_state, "debugger", None)
    if debugger is None or debugger.remote is None or not session_is(debugger.remote):
        return None
    return debugger


def active_debugger() -> "PdbWrapper | None":
    """The calling thread's pdb whose session is open in this process, if any."""
    return _thread_debugger(lambda remote: remote.owned)


def ending_debugger() -> "PdbWrapper | None":
    """The calling thread's pdb whose session is ending: its end has gone out (the server and
    its clients see the rank run on), and its trace function, which the stop runs in, has not
    returned yet to the program."""
    return _thread_debugger(lambda remote: remote.ended)


class _EndWithThread:
    """Kept in thread-local storage: ends a session still open when its thread finishes.

    Stepping (`n`, `s`) off a thread's last frame leaves pdb without a `continue`, so nothing
    else would tell the server; the session would linger as "running" until the process exits.
    """

    def __init__(self, remote: RemoteSession) -> None:
        self.remote = remote

    def __del__(self) -> None:
        self.remote.end("", EndReason.THREAD_FINISHED)


def _end_with_thread(remote: RemoteSession) -> None:
    """Tie `remote` to the calling thread's life (the main thread's end is the process's)."""
    if threading.current_thread() is threading.main_thread():
        return
    watch = getattr(_thread_state, "watch", None)
    if watch is None or watch.remote is not remote:
        _thread_state.watch = _EndWithThread(remote)


def _interrupt_command(thread_id: int) -> None:
    """Raise KeyboardInterrupt in the pdb command `thread_id` runs, as local pdb's Ctrl-C does.

    In the main thread, while the program's SIGINT handler is Python's own (held or not:
    meshdbg.worker.signal_hold), by sending it SIGINT, as the terminal does for local pdb: a
    call blocked in C that a signal ends (a sleep, a socket's read, a lock, an Event's wait)
    ends at once with it. Elsewhere (another thread, which no signal's Python handler runs in;
    a program's own handler, which is left alone), as an exception set on the thread and
    raised at its next bytecode (a blocked call ends first), never inside meshdbg's sending and
    polling, which hold it to their end (`signal_hold.interrupt`).
    """
    if thread_id == threading.main_thread().ident and program_handler(signal.SIGINT) is signal.default_int_handler:
        signal.pthread_kill(thread_id, signal.SIGINT)
    else:
        interrupt(thread_id, KeyboardInterrupt)  # (never inside meshdbg's own sending, which holds it)


def _take_pending_interrupt() -> None:
    """A Python call, where an interrupt raised into this thread just before lands."""


def _forget_unhandled_interrupt() -> None:
    """Let the program exit as it will after an interrupted pdb command.

    CPython's `eval` of a string (what `p`, `pp` and `display` run) that raises
    KeyboardInterrupt marks the interpreter to kill itself with SIGINT at its exit, though pdb
    caught the interrupt and the program went on (3.11-3.13; local pdb's program ends so too): under
    `meshdbg run` the launcher would take that for a failed rank and stop the mesh. The next
    string evaluation clears the mark.
    """
    eval("None")


class _Activity(enum.Enum):
    """What the session's thread is doing, as an interrupt must know it."""

    RUNNING = enum.auto()   # the user's code, traced by this pdb: an interrupt breaks in
    STOPPING = enum.auto()  # pdb entering or leaving a stop: an interrupt has nothing to do
    WAITING = enum.auto()   # pdb waits for a line: already stopped
    QUEUED = enum.auto()    # a line arrived and pdb's thread is about to run it: an interrupt waits until it runs
    COMMAND = enum.auto()   # pdb runs a command (`p slow()`): an interrupt raises KeyboardInterrupt in it


class _RemoteStdin:
    """pdb's stdin: each `readline` ships pending output and waits for the next line."""

    def __init__(self, owner: "PdbWrapper") -> None:
        self._owner = owner

    def readline(self) -> str:
        return self._owner.read_remote_line()

    def close(self) -> None:
        """(`exit()` in `interact` closes sys.stdin, which is this then: nothing to close.)"""


class PdbWrapper(pdb.Pdb):
    """A pdb.Pdb whose console is a remote client of the DebugClient."""

    def __init__(self, open_session: SessionOpener, remote: RemoteSession | None = None,
                 like: pdb.Pdb | None = None) -> None:
        """`like`: the pdb the program made itself (`pdb.Pdb(skip=[...]).set_trace()`), whose
        choices this one keeps: the modules it skips, and the `.pdbrc` lines it read (none with
        `readrc=False`)."""
        self._output = StreamedOutput(lambda: getattr(self, "remote", None))
        readrc = setting(READRC)  # ~/.pdbrc and ./.pdbrc, as local pdb
        # pdb reads and writes through these two file-likes (readline, write, flush) only.
        super().__init__(stdin=cast(IO[str], _RemoteStdin(self)), stdout=cast(IO[str], self._output), nosigint=True,
                         skip=like.skip if like is not None else None, readrc=readrc and like is None)
        if like is not None and readrc:
            self.rcLines = list(like.rcLines)
        self.use_rawinput = False
        self._open_session = open_session
        self._opening_next: SessionOpener | None = None  # how the next stop opens its session, if not so (`break_in`)
        self._leaving: EndReason | None = None  # set when pdb is about to let the worker run
        self._thread_id = threading.get_ident()
        self._activity = _Activity.RUNNING
        # An interrupt (another thread) reads what this one does. Entered as the plain lock:
        # Condition's own enter is Python code, where the main thread's SIGINT may raise with
        # the lock taken, and every later interrupt would wait for it for good.
        self._activity_lock = threading.Lock()
        self._activity_changed = threading.Condition(self._activity_lock)
        self._interrupted = False
        self._interrupted_command = False  # a KeyboardInterrupt was raised into the command under way
        self._prompted = False
        self._resuming = False  # a Resume came at a prompt opened inside a command: leaving it, then `continue`
        self._asking = False  # pdb asks a question of its own (`_ask`): the next line is its answer
        # (pdb, frame, line) of the last position shown in this stop, and its (frame, location)
        self._shown_position: tuple[tuple[pdb.Pdb, FrameType, int], tuple[pb.Frame, str]] | None = None
        self._prompting: _PromptMessage | None = None  # the message the last prompt of this stop went out in
        self.remote: RemoteSession | None = None
        self.interacting = False  # in `interact` (meshdbg.worker.interact): the prompt says who reads
        if remote is not None:
            self._adopt(remote)

    # ---- session lifecycle ------------------------------------------------------------

    def _adopt(self, remote: RemoteSession, prompted: bool = False) -> None:
        """Make `remote` this pdb's session, the calling thread's one (`prompted`: someone has
        seen a prompt of it and waits for the reply to a command)."""
        self.remote = remote
        self._prompted = prompted
        self._output.open_session()
        remote.on_interrupt = self._on_interrupt
        remote.on_command = self._command_arrived
        _thread_state.debugger = self
        _end_with_thread(remote)

    def hand_over(self, frame: FrameType, open_session: SessionOpener, header: str | None = None,
                  like: pdb.Pdb | None = None) -> None:
        """`breakpoint()` reached while this pdb steps: a fresh pdb (as local `pdb.set_trace()`
        makes one; `like` the program's own pdb) takes this session and stops at `frame`; the
        command that got here gets the new position as its reply."""
        successor = PdbWrapper(open_session, like=like)
        successor._take_session_of(self)
        stop_with_header(successor, frame, header)

    def _take_session_of(self, stepping: "PdbWrapper") -> None:
        """Stop in the session that `stepping` (another pdb of this thread) runs a command in:
        that command returns with this stop, as local pdb's shares one terminal."""
        remote, stepping.remote = stepping.remote, None
        assert remote is not None  # hand_over runs only in a command of a session
        self._adopt(remote, stepping._prompted)

    @property
    def stopped(self) -> bool:
        """pdb is stopped here (waiting for a line or running one): a `breakpoint()` reached
        now comes from a command such as `p f()`."""
        return self._activity is not _Activity.RUNNING

    def _ensure_session(self) -> bool:
        """This pdb has a session of its own in this process, opened now if need be; False
        (said on stderr) when none can be opened, and the worker goes on."""
        if self.remote is not None and self.remote.owned:  # (every prompt after a stop's first)
            self._opening_next = None
            return True
        opening, self._opening_next = self._opening_next or self._open_session, None
        self.remote = None  # none yet, or a forked child's: the parent's session is not ours
        stepping = active_debugger()
        if stepping is not None and not stepping.stopped:
            # A stop of this pdb (its coroutine resumed after an await, say) while another pdb
            # of the thread runs `n` or `s`: the stop lands in that command's session.
            self._take_session_of(stepping)
        if self.remote is None:
            try:
                self._adopt(opening())
            except Exception as exc:  # any failure to reach the server must not stop the worker
                say_once(f"meshdbg: cannot open a debug session ({exc}); continuing\n")
                return False
        return True

    def interaction(self, frame: FrameType | None, traceback: TracebackType | None) -> None:
        # A stop asked for until this one is under way (an interrupt's signal landing as its
        # session opens) is this one (meshdbg.worker.stop_opening): it opened a second session
        # there, whose pdb waited for this stop's end to show a prompt, listed running for good.
        before, OPENING.now = OPENING.now, True
        try:
            if not self._ensure_session():
                self.set_continue()
                return
            self._set_activity(_Activity.STOPPING)
        finally:
            OPENING.now = before
        if self._interrupted:
            self._interrupted = False
            self.message(INTERRUPTED)
        try:
            super().interaction(frame, traceback)
        finally:
            forget_stop(self)
            self._shown_position = self._prompting = None
            self._set_activity(_Activity.RUNNING)
        if self._leaving is not None and self.remote is not None:
            self._end_session(self._leaving)  # a .pdbrc's `c` (3.11/3.12 run it before any prompt)

    def _cmdloop(self) -> None:
        """pdb's loop of prompts at a stop, which takes a Ctrl-C (SIGINT; meshdbg's interrupt of
        a command) as `--KeyboardInterrupt--` and reads on. One more that lands while pdb shows
        the last (a burst: a terminal's Ctrl-C reaches every rank of a job, as often as it is
        pressed) escaped pdb's handler and ended the program: it is taken as the first was, and
        the stop goes on at its prompt."""
        while True:
            try:
                super()._cmdloop()
                return
            except KeyboardInterrupt:  # (raised in pdb's `except KeyboardInterrupt:` itself)
                continue

    def cmdloop(self, intro: str | None = None) -> None:
        """pdb's command loop, for a stop or a breakpoint's `commands` block; when it lets the
        worker run (`c`, `q`), the session ends."""
        if not self.commands_defining:
            self._leaving = None
        super().cmdloop(intro)
        if self.commands_defining:  # `commands` reads its block with a loop of its own
            return
        self._set_activity(_Activity.RUNNING)
        if self._leaving is not None:
            self._end_session(self._leaving)

    def bp_commands(self, frame: FrameType) -> bool:
        """Run a breakpoint's `commands`; what a block that resumes (no prompt) printed goes
        to the rank's output, since no one waits at a prompt for it."""
        stop = super().bp_commands(frame)
        if not stop and self.remote is None:
            text = self._take_output()
            if text:
                sys.stdout.write(text)
                sys.stdout.flush()
        return stop

    def set_continue(self) -> None:
        self._leaving = self._leaving or EndReason.CONTINUED
        super().set_continue()

    def postcmd(self, stop: bool, line: str) -> bool:
        stop = super().postcmd(stop, line)
        if stop:
            self._set_activity(_Activity.STOPPING)
        return stop

    def _end_session(self, reason: EndReason) -> None:
        """End the session with what pdb wrote since its last prompt; when it never showed a
        prompt (a .pdbrc that continues), no one asked for that output: the next stop shows it.
        The end goes out before the program's descriptors are given back (which wakes the
        capture's thread to drain), so the server has it at once."""
        remote = self.remote
        if remote is not None:
            remote.end(fit_reply(self._take_output()) if self._prompted else "", reason, park=True)
        self._output.close_session()
        self.remote = None
        self._leaving = None
        if getattr(_thread_state, "debugger", None) is self:
            _thread_state.debugger = None
        if remote is not None:
            remote.wait_closed()

    def _take_output(self) -> str:
        return self._output.take()

    def _getval(self, arg: str) -> Any:
        """pdb's `_getval` (`p`, `pp`, `display`, ...: the expression evaluated in the frame),
        on code compiled once per expression: compiling `x` again is most of a `p x` (issue
        22). An expression that does not compile alone (a syntax error, leading blanks, which
        eval strips) goes to pdb as text, which shows the error as it does."""
        try:
            code = compiled_expression(arg)
        except Exception:
            return super()._getval(arg)
        return super()._getval(code)  # type: ignore[arg-type]  # (eval takes a code object as it takes text)

    def message(self, msg: str, end: str | None = "\n") -> None:  # (3.13 added `end`)
        """pdb's `print(msg, file=self.stdout)`, as one write: every write to meshdbg's stdout
        first brings in what the program wrote (meshdbg.worker.output), and print writes
        the line and its newline apart (issue 22: a write less in every `p`). A message
        without a newline (3.13's interact) is printed as pdb does, so the last write is
        what it was."""
        if end == "\n" or end is None:
            self.stdout.write(str(msg) + "\n")
        else:
            super().message(msg, end=end)  # type: ignore[call-arg]  # (3.13's signature)

    def _standing(self) -> pdb.Pdb:
        """The pdb whose position the session shows: one that `debug` started inside this one
        (the thread's tracer while its prompt reads through ours), else this one."""
        return standing(self)

    def _position(self) -> tuple[pb.Frame, str]:
        """Where pdb stands: the frame for the wire, and the location as pdb prints it on a
        stop (`> file(line)func()` and `-> source`). Built once per position of a stop: a
        `p x` after a `p y` stands where it stood (a return value, whose repr may change,
        is shown afresh each time)."""
        standing = self._standing()
        if not standing.stack:
            return pb.Frame(), ""
        frame, lineno = standing.stack[standing.curindex]  # the frame of pdb's curframe_locals
        key = (standing, frame, lineno)
        if self._shown_position is not None and self._shown_position[0] == key:
            return self._shown_position[1]
        stand_in = cast(FrameType, FrameWithLocals(frame, standing.curframe_locals))  # a frame with pdb's locals
        position = wire_frame(frame, lineno, standing.canonic), wire_text("> " + standing.format_stack_entry((stand_in, lineno),
                                                                                           pdb.line_prefix))
        if "__return__" not in standing.curframe_locals:
            self._shown_position = key, position
        return position

    def _prompt_message(self, output: str, prompt: str) -> pb.WorkerMessage:
        """The message a prompt goes out in: pdb's `output`, its `prompt`, where pdb stands
        and who reads the next line. One message serves every prompt of a stop at the same
        position, prompt and reader, with only its output set anew (issue 22: a `p x` after a
        `p y` is the same prompt; the message goes to the wire as bytes at once)."""
        position, kind = self._position(), prompt_kind(self)
        made = self._prompting
        if made is None or made.position is not position or made.prompt != prompt or made.kind is not kind:
            made = self._prompting = _PromptMessage(position, prompt, kind)
        made.fields.output = output
        return made.message

    def read_remote_line(self) -> str:
        """Send what pdb wrote plus a read request; return the line the server sends back."""
        if self._resuming:  # unwinding to pdb's own prompt after a Resume: no one is asked
            self._output.retract_prompt()
            return self._line_for_resume()
        self._set_activity(_Activity.WAITING)
        prompt = self._output.last_write
        just_prompted = bool(prompt) and not prompt.endswith("\n")  # pdb's last write is its prompt, just written
        output = self._output.take(synced=just_prompted)
        if just_prompted and output.endswith(prompt):
            output = output[: -len(prompt)]
        else:
            prompt = self.prompt
        if not self._ensure_session():
            return "continue\n"
        remote = self.remote
        assert remote is not None  # _ensure_session made it
        self._prompted = True
        message = remote.send_then_receive(self._prompt_message(fit_reply(output), prompt))
        while True:
            kind = message.WhichOneof("kind") if message is not None else None
            if message is None or kind is None:
                say(f"meshdbg: {remote.farewell}; continuing\n")
                self._end_session(EndReason.WORKER_GONE)
                return "continue\n"
            if kind == "input":
                self._set_activity(_Activity.COMMAND)
                return "" if message.input.eof else message.input.line + "\n"
            if kind == "resume":
                if message.resume.clear_breakpoints:
                    self.clear_all_breaks()
                self._set_activity(_Activity.COMMAND)
                return self._line_for_resume()
            if kind == "query":  # completion, stacks, values: meshdbg.worker.queries
                message = remote.send_then_receive(pb.WorkerMessage(answer=answer(self, message.query)))
            else:
                message = remote.receive()

    def _line_for_resume(self) -> str:
        """What the reader asking now gets for a Resume (`meshdbg continue`, the console's
        `continue all`): pdb's `continue` at pdb's own prompt; at a prompt opened inside a
        command, what leaves it (`end` of a `commands` block, the end of `interact`'s input,
        `continue` of the recursive debugger, no answer to pdb's question), then `continue`
        once pdb's own prompt reads.
        (`continue` went to whichever prompt was open: into a `commands` block it ended the
        block, and the rank stayed stopped while its client was told it resumed.)"""
        if self._asking:  # no answer: pdb's default, then `continue` at its prompt
            self._resuming = True
            return ""
        kind = prompt_kind(self)
        self._resuming = kind is not PromptKind.PDB
        return _LEAVING_LINES[kind]

    # ---- interrupts (called on the session's reader thread) ------------------------------

    def _set_activity(self, activity: _Activity) -> None:
        with self._activity_lock:
            before, self._activity = self._activity, activity
            interrupted, self._interrupted_command = self._interrupted_command, False  # (set only in a command)
            if before is _Activity.QUEUED:  # (the one state an interrupt waits to see left: `_on_interrupt`)
                self._activity_changed.notify_all()
        if before is _Activity.COMMAND:
            try:
                # Still inside pdb's command loop, whose KeyboardInterrupt handler shows it as
                # local pdb does (`--KeyboardInterrupt--`): a late interrupt cannot reach user code.
                _take_pending_interrupt()
            finally:
                if interrupted:
                    _forget_unhandled_interrupt()

    def _command_arrived(self) -> None:
        """A line (or a resume) is on its way to pdb's thread, which may not have woken yet."""
        with self._activity_lock:
            if self._activity is _Activity.WAITING:
                self._activity = _Activity.QUEUED

    def _on_interrupt(self) -> pb.Frame:
        """Break into what the thread runs, as local pdb's SIGINT does; where it runs now.

        Running the user's code: every frame of the thread is traced again and pdb steps, so
        it stops at the next Python line (a thread inside a C call stops when the call
        returns). Running a pdb command: the command gets a KeyboardInterrupt (`_interrupt_command`:
        in the main thread, a blocking call's included). A command that
        arrived just before and that pdb's thread has not started yet is waited for (bounded).
        """
        with self._activity_lock:
            self._activity_changed.wait_for(lambda: self._activity is not _Activity.QUEUED, COMMAND_START_S)
            frame = sys._current_frames().get(self._thread_id)
            if self._activity is _Activity.RUNNING and frame is not None:
                self.break_in(frame)
            elif self._activity is _Activity.COMMAND:
                _interrupt_command(self._thread_id)
                self._interrupted_command = True
        user = innermost_user_frame(frame)
        return wire_frame(user, user.f_lineno) if user is not None else pb.Frame()  # (see wire_frame)

    def note_interrupted(self) -> None:
        """The coming stop is an interrupt's: it begins with local pdb's SIGINT message."""
        self._interrupted = True

    def break_in(self, frame: FrameType | None, open_session: SessionOpener | None = None) -> None:
        """Stop at the next Python line of `frame` or of any of its callers, saying that the
        program was interrupted (from the reader thread, or the agent's signal handler).

        From this pdb's own thread (the agent's signal, maybe come while this pdb still ends
        its session after `c`: `ending_debugger`), tracing is turned on again, which `c` turned
        off, and the stop opens its session with `open_session` (an interrupt's)."""
        self.note_interrupted()
        self.set_step()
        while frame is not None:
            frame.f_trace = self.trace_dispatch
            frame.f_trace_lines = True
            frame = frame.f_back
        if threading.get_ident() == self._thread_id:
            self._opening_next = open_session
            sys.settrace(self.trace_dispatch)

    # ---- meshdbg's frames are not the user's ------------------------------------------

    def get_stack(self, f: FrameType | None, t: TracebackType | None) -> tuple[list, int]:
        """pdb's stack without meshdbg's own outermost frames (the bootstrap, runpy)."""
        stack, index = super().get_stack(f, t)
        hidden = 0
        while hidden < index and is_internal(stack[hidden][0]):
            hidden += 1
        return stack[hidden:], index - hidden

    def stop_here(self, frame: FrameType) -> bool:
        return super().stop_here(frame) and not is_meshdbg_call(frame)

    def dispatch_return(self, frame: FrameType, arg: object) -> Callable[..., Any]:
        trace = super().dispatch_return(frame, arg)
        if self.stopframe is None and self.remote is not None and is_outermost_user_frame(frame):
            # Stepping off the end of the user's code on this thread: local pdb would go on
            # into the interpreter's shutdown or threading's internals; the session ends.
            self.set_continue()
            self._end_session(EndReason.THREAD_FINISHED)
        return trace

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

    def do_quit(self, arg: str) -> bool:
        """q(uit) | exit
        End this debug session. The worker forgets its breakpoints and continues; the rest of
        the mesh is unaffected (remote pdb never kills the worker on quit).
        """
        self.message("meshdbg: session ended; this rank continues with its breakpoints cleared")
        self.clear_all_breaks()
        self._leaving = EndReason.QUIT
        self.set_continue()
        return True

    do_q = do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:
        """EOF
        The client went away: end the session and continue.
        """
        return self.do_quit(arg)

    def do_clear(self, arg: str) -> None:
        if arg:
            super().do_clear(arg)
            return None
        if self._ask("Clear all breaks? ").strip().lower() in ("y", "yes"):  # pdb's own question and answers
            breakpoints = [bp for bp in bdb.Breakpoint.bpbynumber if bp]
            self.clear_all_breaks()
            for bp in breakpoints:
                self.message(f"Deleted {bp}")
        return None

    do_clear.__doc__ = pdb.Pdb.do_clear.__doc__
    do_cl = do_clear

    def _ask(self, question: str) -> str:
        """pdb's `input(question)`, asked in the session: the question is its prompt, the next
        line the answer ("" at the end of the input, or when a Resume comes meanwhile). pdb's
        own `input()` would ask the worker's terminal (before, `clear` cleared all unasked)."""
        self.stdout.write(question)
        self._asking = True
        try:
            return self.read_remote_line()
        finally:
            self._asking = False

    def do_interact(self, arg: str) -> None:
        interact(self, cast(MutableMapping[str, object], self.curframe_locals))  # a dict in CPython

    do_interact.__doc__ = pdb.Pdb.do_interact.__doc__

    def do_run(self, arg: str) -> None:
        self.error("run/restart is not available in a remote session (it would end the rank's program); "
                   "the session goes on")

    do_run.__doc__ = (pdb.Pdb.do_run.__doc__ or "") + "\n(remote: not available; it would end the rank's program)\n"
    do_restart = do_run

    def help_pdb(self) -> None:
        """pdb's overview (local pdb starts Python's interactive help here, which would read
        the worker's own terminal)."""
        self.message((pdb.__doc__ or "").strip())


_LEAVING_LINES = {PromptKind.PDB: "continue\n", PromptKind.COMMANDS: "end\n", PromptKind.INTERACT: "",
                  PromptKind.DEBUG: "continue\n"}


class _PromptMessage:
    """A prompt's message for one position, prompt and reader (`PdbWrapper._prompt_message`),
    filled in place: nested constructors would copy the Prompt into the message and the frame
    into the Prompt, twice the work (issue 22)."""

    __slots__ = ("position", "prompt", "kind", "message", "fields")

    def __init__(self, position: tuple[pb.Frame, str], prompt: str, kind: PromptKind) -> None:
        self.position, self.prompt, self.kind = position, prompt, kind
        self.message = pb.WorkerMessage()
        self.fields = self.message.prompt
        self.fields.prompt, self.fields.location, self.fields.kind = wire_text(prompt), position[1], kind.pb
        self.fields.frame.CopyFrom(position[0])


