"""Debug sessions as the server sees them (meshdbg.debugger.registry holds them).

A `Session` is one stopped pdb in one worker thread. It is driven one command at a time:
`execute` sends a line (or a resume) to the worker and waits for pdb's reply, which the
worker batches with its next prompt. No gRPC here: the servicer moves protobuf messages
between these objects and the wire.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import TYPE_CHECKING, Awaitable, Callable

from meshdbg.wire.chunks import Tail, check_line
from meshdbg.wire.errors import SessionError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.debugger import peers
from meshdbg.debugger.peers import PeerFeed
from meshdbg.wire.pending import PendingRequests
from meshdbg.wire.coords import identity_coords
from meshdbg.wire.logs import logger
from meshdbg.wire.vocabulary import EndReason, PromptKind, State, WatchKind, wire_value

if TYPE_CHECKING:
    from meshdbg.debugger.registry import SessionRegistry

Writer = Callable[[pb.ServerMessage], Awaitable[None]]
OutputListener = Callable[[str], Awaitable[None]]  # gets a running command's output chunks
log = logger(__name__)

LISTED_FIELD = pb.ListReply.DESCRIPTOR.fields_by_name["sessions"].number


async def _unread(text: str) -> None:
    """Where a command's output goes once the client it streamed to went away: into the
    session's transcript only (replayed, its tail, to whoever attaches next), not collected
    for a reply no one will read. Collected, the rest of a 100 MB `p` under a stalled client
    grew the server by 217-348 MB (the chunks, joined, then copied into the reply)."""


def length_delimited(field: int, payload: bytes) -> bytes:
    """`payload` as a length-delimited field `field` of a message (protobuf's wire format: the
    tag, the length as a varint, the bytes); messages concatenated this way are one message."""
    head, size = bytearray(), len(payload)
    for value in (field << 3 | 2, size):
        while value > 0x7F:
            head.append(value & 0x7F | 0x80)
            value >>= 7
        head.append(value)
    return bytes(head) + payload


# What a session's listing entry (pb.SessionInfo) is made of, as the session stood at one moment:
# its id, state, prompt, prompt kind, and its identity and frame as their wire bytes.
InfoParts = tuple[int, State, str, PromptKind, bytes, bytes]


def fill_info(info: pb.SessionInfo, parts: InfoParts) -> pb.SessionInfo:
    """`info` (a new message, or one inside another: filled in place, never copied) made of `parts`."""
    session_id, state, prompt, prompt_kind, identity, frame = parts
    info.id, info.state, info.prompt, info.prompt_kind = session_id, state.pb, prompt, prompt_kind.pb
    info.identity.MergeFromString(identity)
    info.frame.MergeFromString(frame)
    return info


class Session:
    """One worker thread stopped in pdb, reached through `write`, which sends on its stream.

    Thousands wait at once for as long as a person looks elsewhere, so a session holds little
    while it waits: slots, its identity and frame as their wire bytes (a protobuf message held
    is an arena of 0.5–1.3 KiB; the ones read are parsed again when asked for), the identity's
    name and host shared between sessions, and what only a command, a question, an attached
    client or output needs (their futures, lists, the transcript) made when one comes."""

    __slots__ = ("id", "_identity", "rank", "name", "thread_id", "hostname", "pid", "state", "stops", "_frame", "prompt",
                 "prompt_kind", "location", "_transcript", "_echo", "_unseen", "_late", "end_reason", "gone", "_ended", "_registry",
                 "_write", "_busy", "_pending", "_listener", "_collected", "_peers", "_issuer", "_queries", "_interrupts",
                 "_info_bytes", "_prompted")

    def __init__(self, session_id: int, identity: pb.Identity, registry: "SessionRegistry", write: Writer) -> None:
        self.id = session_id
        self._identity = identity.SerializeToString()
        self.rank, self.thread_id, self.pid = identity.rank, identity.thread_id, identity.pid
        self.name, self.hostname = sys.intern(identity.name), sys.intern(identity.hostname)  # alike across sessions
        self.state = State.RUNNING  # until the worker's first prompt arrives
        self.stops = 0  # prompts so far: the first is the stop a watcher may call news
        self._frame = b""  # where pdb stands (`frame`), serialized
        self.prompt = ""
        self.prompt_kind = PromptKind.PDB
        self.location = ""  # pdb's `> file(line)func()` / `-> source` for where it stands
        self._transcript: Tail | None = None  # (the end of) the output since the last command, replayed on attach
        self._echo = ""  # that command's line after pdb's prompt, as a terminal shows it, replayed before it
        self._unseen = ""  # a stop's beginning with more than its position (display changes, a commands
        # block's output, --Return--) that no attach has replayed yet: the next command's output starts with it
        self._late = ""  # the line of a command left without a reply when its rank stopped answering
        self.end_reason: EndReason | None = None
        self.gone = ""  # why the worker went away (died, hung), once it has
        self._ended: asyncio.Event | None = None  # made when first awaited (`ended`): most sessions never are
        self._registry = registry
        self._write = write
        self._busy = False  # a command runs (`_send`): another one is refused, not queued
        self._pending: asyncio.Future[pb.Reply] | None = None
        self._listener: OutputListener | None = None
        self._collected: list[str] | None = None  # output chunks of a command run without a listener
        self._peers: tuple[PeerFeed, ...] = ()  # the attached clients, each shown what the others do
        self._issuer: PeerFeed | None = None  # the attached client whose command runs (it sees its own)
        self._queries: PendingRequests[pb.QueryAnswer] | None = None  # made with the first question
        self._interrupts: PendingRequests[pb.Frame] | None = None  # made with the first interrupt
        self._info_bytes: bytes | None = None
        self._prompted: asyncio.Future[None] | None = None  # made when a resume waits for the first prompt

    @property
    def identity(self) -> pb.Identity:
        """Who the worker said it is (a copy: parsed from its bytes at each call)."""
        return pb.Identity.FromString(self._identity)

    @property
    def frame(self) -> pb.Frame:
        """Where pdb stands (a copy, as `identity`)."""
        return pb.Frame.FromString(self._frame)

    @property
    def order(self) -> tuple[int, str, int, int]:
        """How listings sort: by rank, name, thread, then id."""
        return self.rank, self.name, self.thread_id, self.id

    @property
    def ended(self) -> asyncio.Event:
        """Set once the session is over."""
        if self._ended is None:
            self._ended = asyncio.Event()
            if self.state is State.EXITED:
                self._ended.set()
        return self._ended

    @property
    def coords(self) -> dict[str, int]:
        return identity_coords(self.identity)

    def info(self) -> pb.SessionInfo:
        return fill_info(pb.SessionInfo(), self.info_parts())

    def info_parts(self) -> InfoParts:
        """What `info()` is made of, as the session stands now: taken with no message built."""
        return self.id, self.state, self.prompt, self.prompt_kind, self._identity, self._frame

    def _record(self, text: str, program: bool = False) -> None:
        """Add `text` to the transcript (made with its first text); `program`: the program's
        own output between pdb's commands, which a client that showed it leaves out of a replay."""
        if text:
            if self._transcript is None:
                self._transcript = Tail()
            self._transcript.add(text, aside=program)

    def _new_transcript(self, echo: str = "") -> None:
        """The output so far is no longer the session's to replay: the same Tail starts over
        (one made per command cost a `p x` a microsecond, issue 22), led by `echo`, the line of
        the command that begins (a replay showed its output alone: `42` after `p x`)."""
        self._echo = echo
        if self._transcript is not None:
            self._transcript.clear()

    def _set_state(self, state: State) -> None:
        """Change state (and with it, maybe, the frame and prompt): the cached listings go."""
        self.state, self._info_bytes = state, None
        self._registry.listing = None

    def listed_bytes(self) -> bytes:
        """`info()` serialized as one element of a ListReply's `sessions` (its tag, its length,
        the message), kept until the session changes: a listing of 10,000 sessions is these
        bytes joined, with no message built, parsed or serialized again."""
        if self._info_bytes is None:
            self._info_bytes = length_delimited(LISTED_FIELD, self.info().SerializeToString())
        return self._info_bytes

    def replay(self, following: bool = False, program_shown: bool = False) -> pb.Reply:
        """What an attaching client sees first: where pdb stands, then the last command's line
        after pdb's prompt and the output since (just that when it already shows the position,
        as a stop's does, maybe followed by what the program printed since, and by what pdb
        printed as the stop began: display changes), as a terminal shows them. `following`: the client let the rank run and comes back to
        this stop as local pdb's terminal would, so it sees only what pdb printed (nothing of
        the position after a `silent` commands block). `program_shown`: the client showed the
        program's output as it came (`meshdbg run`'s console), so what the program printed
        since pdb's last output is left out (the whole of it came again at each attach)."""
        self._unseen = ""
        output = self._echo + (self._transcript.text(with_aside=not program_shown) if self._transcript is not None else "")
        if (not following and self.location and self.state is State.STOPPED
                and self.location + "\n" not in output):
            output = self.location + "\n" + output
        return pb.Reply(output=output, prompt=self.prompt, frame=self.frame, prompt_kind=self.prompt_kind.pb,
                        ended=self.state is State.EXITED,
                        reason=wire_value(self.end_reason))

    # ---- driven by control clients ----------------------------------------------------

    async def execute(self, line: str, on_output: OutputListener | None = None, eof: bool = False,
                      by: PeerFeed | None = None) -> pb.Reply:
        """Run one pdb command and return its output (`eof`: end pdb's input instead, as Ctrl-D).

        With `on_output`, the output streams to it in chunks as the worker writes it and the
        reply holds only its tail, so output of any size passes in bounded memory; without,
        the reply holds all of it. Every attached client but `by` (the one that sent it) sees
        the line, its output and the reply.
        """
        line = check_line(line)
        message = pb.ServerMessage()  # filled in place: a nested constructor would copy the Input
        message.input.line, message.input.eof = line, eof
        opening = self._opening()
        if opening is not None:
            await opening
        return await self._send(message, on_output, line, by)

    async def resume(self, clear_breakpoints: bool = False, on_output: OutputListener | None = None) -> pb.Reply:
        """Leave pdb and let the worker run (once its first prompt came, if the stop is still opening)."""
        opening = self._opening()
        if opening is not None:
            await opening
        return await self._send(pb.ServerMessage(resume=pb.Resume(clear_breakpoints=clear_breakpoints)), on_output,
                                "continue", None)

    def _opening(self) -> Awaitable[None] | None:
        """The first prompt of a stop still opening (its session open, the prompt not come yet:
        a `.pdbrc` runs, a burst of stops is read), else None. Such a rank is as paused as one
        at its prompt: a command (`cast`, a line) or a resume waits for the prompt and goes
        there. (They were refused as "running, not stopped in pdb": `continue` left the rank
        paused, a cast right after a burst of stops left it out.)"""
        if self.state is not State.RUNNING or self.stops:
            return None
        if self._prompted is None:
            self._prompted = asyncio.get_running_loop().create_future()
        return asyncio.shield(self._prompted)  # (one waiter cancelled leaves it to the others)

    def subscribe(self, feed: PeerFeed) -> None:
        """An attached client: from now on it sees what others do here (meshdbg.debugger.peers)."""
        self._peers = (*self._peers, feed)

    def unsubscribe(self, feed: PeerFeed) -> None:
        self._peers = tuple(peer for peer in self._peers if peer is not feed)

    @property
    def attached(self) -> bool:
        """A client is attached to it (a console, `meshdbg attach`, an IDE): someone debugs it."""
        return bool(self._peers)

    def _share(self, make: Callable[..., pb.ProgramShared], *args: object) -> bool:
        """`make(*args)` to every attached client but the issuer (built only if one is there);
        whether any was."""
        if not self._peers or self._peers == (self._issuer,):  # (the common case: only the issuer, or no one)
            return False
        others = [feed for feed in self._peers if feed is not self._issuer]
        if others:
            shared = make(*args)
            for feed in others:
                feed.put(shared)
        return bool(others)

    async def complete(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        """Tab completions computed by the remote pdb in its current frame."""
        try:
            answer = await self.query(pb.QueryRequest(complete=pb.CompleteRequest(
                text=text, line=line, begidx=begidx, endidx=endidx)))
        except SessionError:  # not at its prompt, or it ended meanwhile: nothing to offer
            return []
        return list(answer.completions.matches)

    async def sample(self, all_threads: bool) -> pb.SampledStacks:
        """The stacks of this session's process, taken by its pdb thread while at the prompt
        (for a process without an agent stream). Unbounded: the caller bounds the wait."""
        return (await self.query(pb.QueryRequest(sample=pb.SampleRequest(all_threads=all_threads)))).stacks

    async def evaluate(self, expression: str) -> pb.Evaluation:
        """EXPR's value in pdb's current frame, as text, without touching the transcript."""
        return (await self.query(pb.QueryRequest(evaluate=pb.EvaluateRequest(expression=expression)))).evaluation

    async def query(self, question: pb.QueryRequest) -> pb.QueryAnswer:
        """Ask the stopped pdb a question it answers at its prompt (meshdbg.worker.queries);
        SessionError when it is not there. Unbounded: the caller bounds the wait."""
        if self.state is not State.STOPPED:
            raise SessionError(f"rank {self.rank} is {self.state}, not stopped at its prompt")

        def ask(request_id: int) -> Awaitable[None]:
            question.id = request_id
            return self._write(pb.ServerMessage(query=question))

        if self._queries is None:
            self._queries = PendingRequests()
        return await self._queries.request(ask)

    async def interrupt(self) -> pb.Frame:
        """Break into the command this session runs, as Ctrl-C in local pdb; where its thread
        runs now. The command's reply comes as usual, once the thread stops. Unbounded: the
        caller bounds the wait (meshdbg.debugger.deadlines)."""
        if not self.running_command:
            raise SessionError(f"rank {self.rank} is not running a command")
        if self._interrupts is None:
            self._interrupts = PendingRequests()
        return await self._interrupts.request(lambda request_id: self._write(
            pb.ServerMessage(interrupt=pb.Interrupt(request_id=request_id))))

    @property
    def running_command(self) -> bool:
        """A line went to pdb and its prompt has not come back: whether or not anyone still
        waits for the reply (a console that gave its prompt back while the command is blocked
        in C interrupts it again). Before its first prompt a session runs no command."""
        return self.state is State.RUNNING and self.stops > 0

    async def _send(self, message: pb.ServerMessage, on_output: OutputListener | None, line: str,
                    by: PeerFeed | None) -> pb.Reply:
        if self.state is not State.STOPPED or self._busy:
            raise self._not_ready()
        self._busy = True
        try:
            pending = self._pending = asyncio.get_running_loop().create_future()
            self._set_state(State.RUNNING)
            self._new_transcript(f"{self.prompt}{line}\n")
            self._listener, self._issuer = on_output, by
            if self._peers:
                self._share(peers.echo, self.prompt, line)
            self._registry.publish(WatchKind.UPDATED, self)
            try:
                if self._unseen:
                    unseen, self._unseen = self._unseen, ""
                    await self.on_output(unseen)
                await self._write(message)
                reply = await pending
            finally:
                collected = self._collected
                self._pending = self._listener = self._issuer = self._collected = None
            if collected:
                reply.output = "".join(collected) + reply.output
            return reply
        finally:
            self._busy = False

    def _not_ready(self) -> SessionError:
        """Why a command cannot go to this session now."""
        if self._busy:
            return SessionError(f"rank {self.rank} is busy running another command")
        if self.state is State.EXITED:
            return SessionError(f"rank {self.rank}'s session has ended ({self.end_reason})")
        if self.state is State.NOT_ANSWERING:
            return self._silence()
        return SessionError(f"rank {self.rank} is running, not stopped in pdb")

    # ---- driven by the worker's stream ------------------------------------------------

    async def on_output(self, text: str) -> None:
        """A chunk of the running command's output (or, between commands, of the program's):
        to its listener (waiting while the listener's client is behind, which holds the worker
        back too), else collected; and to the other attached clients."""
        self._record(text, program=self._pending is None)
        self._share(peers.output, text)
        if self._listener is not None:
            try:
                await self._listener(text)
            except SessionError:  # the client went away: the command runs on without it
                self._listener = _unread
        elif self._pending is not None:
            if self._collected is None:
                self._collected = []
            self._collected.append(text)

    def on_prompt(self, prompt: pb.Prompt) -> None:
        """pdb's prompt: the command under way is answered (its reply: pdb's output, the prompt,
        where pdb stands), or a stop begins. Each field of `prompt` is read once (each read of
        a message's field makes a new Python object), and what a `p x` leaves as it was (the
        prompt's text and kind) is not made again (issue 22: every command's path)."""
        output, location, kind, text = prompt.output, prompt.location, prompt.kind, prompt.prompt
        self._set_state(State.STOPPED)
        self.stops += 1
        if self._prompted is not None:
            self._settle_prompted()
        self._frame = prompt.frame.SerializeToString()
        if text != self.prompt:
            self.prompt = sys.intern(text)  # `(Pdb) ` in nearly every session
        if kind != self.prompt_kind.pb:
            self.prompt_kind = PromptKind.of(kind)
        self.location = location
        self._record(output)
        pending = self._pending
        if pending is None:
            self._unasked(output, location, kind)
        else:
            self._late = ""
            if self._peers:
                self._share(lambda: peers.reply(self._reply(output, kind)))
            if not pending.done():
                pending.set_result(self._reply(output, kind))
        # After the reply: the waiting command resumes before any watcher (issue 22: 9 us of a
        # `p x` inside `meshdbg run`, whose console watches). Over gRPC the two never came in a
        # set order; in-process watchers got the change later anyway, through a stream.
        self._registry.publish(WatchKind.UPDATED, self)

    def _unasked(self, output: str, location: str, kind: pb.QueryPromptKind) -> None:
        """A prompt no command waits for (a stop's first, or the late reply to a command whose
        rank stopped answering, then woke), shown to the attached clients. More than the
        position (display changes, a `commands` block's output) that none was shown is kept
        for whoever comes next (the next attach, or the next command's output); a late reply
        shows under that command's line (it came as the next command's own output, unnamed)."""
        late, self._late = self._late, ""
        unasked = output.replace(location + "\n", "", 1).strip()
        if unasked and late:
            self._echo = late
        shown = self._share(lambda: peers.reply(self._reply(output, kind)))
        if unasked and not shown:
            self._unseen = late + output

    def _reply(self, output: str, kind: pb.QueryPromptKind) -> pb.Reply:
        """The reply of pdb's last prompt (with `output`): one each, as the issuer's copy is added to (`_send`)."""
        made = pb.Reply(output=output, prompt=self.prompt, prompt_kind=kind)
        made.frame.MergeFromString(self._frame)
        return made

    def on_answer(self, answer: pb.QueryAnswer) -> None:
        if self._queries is not None:
            self._queries.answer(answer.id, answer)

    def on_interrupted(self, interrupted: pb.Interrupted) -> None:
        if self._interrupts is not None:
            self._interrupts.answer(interrupted.request_id, interrupted.frame)

    @property
    def writer(self) -> Writer:
        """The stream this session is reached through now (a re-registered stop changes it)."""
        return self._write

    @property
    def registry(self) -> "SessionRegistry":
        return self._registry

    def on_silent(self, why: str) -> None:
        """The stream broke but the worker lives, as far as this server can tell (SIGSTOP, a
        lost connection): listed "not answering" until it re-registers on a new stream
        (`reclaim`) or its process is gone; the command and questions under way fail with `why`."""
        if self.state is State.EXITED:
            return
        self._set_state(State.NOT_ANSWERING)
        self.gone = why
        log.warning("session %d (rank %d, pid %d) not answering: %s", self.id, self.rank, self.pid, why)
        self._record(f"*** {why}\n")
        self._fail_waiting()
        self._registry.publish(WatchKind.UPDATED, self)

    def reclaim(self, write: Writer) -> None:
        """The worker re-registered this stop on a new stream (`write`); its prompt follows,
        with the output it stands at, so the transcript starts again from it."""
        self._fail_waiting()
        self._write = write
        self.gone = ""
        self._set_state(State.NOT_ANSWERING)
        self._new_transcript()

    def _fail_waiting(self) -> None:
        """Settle what waits on the stream that broke (the command, the questions, a resume
        waiting for the first prompt)."""
        error = self._silence()
        self._settle_prompted(error)
        if self._pending and not self._pending.done():
            self._late = self._echo
            self._pending.set_exception(error)
        if self._queries is not None:
            self._queries.settle(error=error)
        if self._interrupts is not None:
            self._interrupts.settle(pb.Frame())

    def _settle_prompted(self, error: SessionError | None = None) -> None:
        """The first prompt came (`error` None), or never will on this stream: a resume waiting
        for it goes on, or fails with `error`."""
        prompted, self._prompted = self._prompted, None
        if prompted is not None and not prompted.done():
            if error is None:
                prompted.set_result(None)
            else:
                prompted.set_exception(error)

    def _silence(self) -> SessionError:
        """Why nothing can be asked of this session now: its worker is not answering."""
        return SessionError(self.silent_why)

    @property
    def silent_why(self) -> str:
        """Why this session is not answering, as a person reads it."""
        return self.gone or f"rank {self.rank} is not answering"

    def on_end(self, output: str, reason: EndReason) -> None:
        """The session is over: continued, quit, or the worker went away."""
        if self.state is State.EXITED:
            return
        self._set_state(State.EXITED)
        self.end_reason = reason
        log.log(logging.DEBUG if reason is EndReason.CONTINUED else logging.INFO,  # a stop is news, a continue is not
                "session %d (rank %d, pid %d) ended: %s%s", self.id, self.rank, self.pid, reason,
                f" ({self.gone})" if self.gone else "")
        self._record(output)
        ended = pb.Reply(output=output, frame=self.frame, ended=True, reason=reason.pb)
        self._share(peers.reply, ended)
        if self._pending and not self._pending.done():
            self._pending.set_result(ended)
        if self._queries is not None:  # a question asked later is refused: the session is not stopped
            self._queries.close(error=SessionError(f"rank {self.rank}'s session ended ({reason})"))
        if self._interrupts is not None:
            self._interrupts.close(pb.Frame())
        self._settle_prompted(SessionError(f"rank {self.rank}'s session ended ({reason})"))
        if self._ended is not None:
            self._ended.set()
        self._registry.close(self, reason)
