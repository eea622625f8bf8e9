"""`meshdbg run`: a DebugClient and a mesh of workers in one command, and the console on demand.

    meshdbg run --mesh hosts=2,gpus=4 train.py --lr 3e-4
    meshdbg run --mesh pp=4 -m mypkg.train

With a terminal, the console opens by itself when a rank first stops in pdb and closes back
to the logs once every rank runs again; quit or Ctrl-D closes it until the next stop, and
`stop` (or Ctrl-C twice) at its prompt ends the job. Without a terminal, each stop prints how
to attach. SIGINT and SIGTERM stop the whole mesh. The exit status is the first failing
rank's (130 when stopped).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.machinery
import importlib.util
import logging
import os
import socket
import sys
import time
from typing import Awaitable, Collection, TypeVar

from meshdbg.debugger.console.job import Job
from meshdbg.debugger.format import status_text
from meshdbg.debugger.gc_pauses import keep_gc_pauses_short
from meshdbg.debugger.control import ControlClient, InProcessServer
from meshdbg.debugger.dap.server import DapServer, listen_for_ides
from meshdbg.debugger.selection import ranks_text
from meshdbg.debugger.views import SessionView
from meshdbg.debugger.news import News
from meshdbg.wire.errors import MeshdbgError, UsageError
from meshdbg.wire.logs import add_log_argument, logged, logger, said
from meshdbg.wire.racing import first_of
from meshdbg.wire.coords import PORT_LIMIT, SECONDS_LIMIT, format_coords
from meshdbg.wire.vocabulary import HOST_LOST, State, StopReason, WatchKind
from meshdbg.debugger.mesh.launcher import MeshLauncher
from meshdbg.debugger.mesh import placing
from meshdbg.debugger.mesh.shape import DEFAULT_SHAPE, MeshShape
from meshdbg.debugger.verbs import add_tls_arguments, bounded_argument

log = logger(__name__)
INTERRUPTED = 130
CONSOLE_CLOSE_S = 2.0  # how long the console may take to close itself when the job ends
SLOW_START_S = 10.0  # how often a start that waits for ranks to register says for which
POST_MORTEM_WAIT_S = 600.0  # without a terminal, how long a post-mortem waits for a client (`--post-mortem-wait`)
T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mesh", metavar="DIM=SIZE,...", help=f"mesh shape, ranks row-major (default: "
                        f"{format_coords(DEFAULT_SHAPE)}), e.g. hosts=2,gpus=4")
    parser.add_argument("--name", default="worker", help="MESHDBG_NAME of every rank (default: worker)")
    parser.add_argument("--no-post-mortem", action="store_true",
                        help="let uncaught exceptions end a rank without a post-mortem session")
    parser.add_argument("--post-mortem-wait", type=bounded_argument(SECONDS_LIMIT, fractions=True),
                        default=POST_MORTEM_WAIT_S, metavar="S",
                        help=f"without a terminal, a post-mortem that no client attaches to within S seconds ends, and "
                             f"its rank fails as without one (default: {POST_MORTEM_WAIT_S:g}; 0: it waits for good)")
    parser.add_argument("--keep-going", action="store_true", help="a failing rank does not stop the others")
    parser.add_argument("--dap", type=bounded_argument(PORT_LIMIT), metavar="PORT", help="also serve IDEs (Debug Adapter Protocol) on "
                        "127.0.0.1:PORT, 0 for a free one, as `meshdbg dap` does")
    add_tls_arguments(parser)
    placing.add_arguments(parser)
    add_log_argument(parser)
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [ARGS]",
                        help="run a module, like python -m")
    parser.add_argument("-c", dest="code", nargs=argparse.REMAINDER, metavar="CODE [ARGS]",
                        help="run CODE, like python -c")
    parser.add_argument("script", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS]",
                        help="the script every rank runs (or a directory or zip file with __main__.py)")


def target_argv(args: argparse.Namespace) -> list[str]:
    """The bootstrap argv for the target: `SCRIPT ARGS...`, `-m MODULE ARGS...` or `-c CODE ARGS...`.

    A target that cannot run is a usage error here, before any rank starts.
    """
    if args.code is not None:
        if not args.code:
            raise UsageError("-c needs code, e.g. meshdbg run --mesh gpus=2 -c 'import train; train.main()'")
        try:
            compile(args.code[0], "<string>", "exec")
        except (SyntaxError, ValueError) as exc:  # (ValueError: a NUL byte)
            raise UsageError(f"-c: {exc}") from None
        return ["-c", *args.code]
    if args.module is not None:
        if not args.module:
            raise UsageError("-m needs a module name, e.g. meshdbg run -m mypkg.train")
        check_module(args.module[0])
        return ["-m", *args.module]
    if not args.script:
        raise UsageError("run needs a script, -m MODULE or -c CODE, e.g. meshdbg run --mesh hosts=2,gpus=4 train.py")
    script = args.script[0]
    if not os.path.exists(script):  # runpy also runs a directory or zip file with a __main__.py
        raise UsageError(f"no such script: {script}")
    if os.path.isdir(script) and not os.path.exists(os.path.join(script, "__main__.py")):
        raise UsageError(f"cannot run the directory {script}: it has no __main__.py")
    return list(args.script)


def check_module(name: str) -> None:
    """UsageError unless the top-level package of `name` is importable as the workers import it
    (the current directory first, like python -m); its submodules are left to the workers."""
    top = name.partition(".")[0]
    found = top.isidentifier() and (importlib.machinery.PathFinder.find_spec(top, [os.getcwd()]) is not None
                                    or importlib.util.find_spec(top) is not None)
    if not found:
        raise UsageError(f"no module named {top}")


@logged("run")
async def main(args: argparse.Namespace) -> int:
    argv = target_argv(args)
    shape = MeshShape.parse(args.mesh) if args.mesh else MeshShape.of(DEFAULT_SHAPE)
    launcher = MeshLauncher(shape, argv, name=args.name, post_mortem=not args.no_post_mortem,
                            stop_on_failure=not args.keep_going, **placing.launcher_options(args, shape))
    job = Job()
    job.take_signals()
    launcher.console_shows = lambda rank: job.showing() == rank
    launcher.on_notice = lambda text: said(log, text, logging.WARNING)
    job.left = launcher.console_left
    watcher: asyncio.Task[None] | None = None
    unattended: asyncio.Task[None] | None = None  # ends the post-mortems no one comes to (no terminal)
    dap: DapServer | None = None
    ides = listen_for_ides(args.dap) if args.dap is not None else None  # a port in use fails before any rank runs
    collector = asyncio.create_task(keep_gc_pauses_short(launcher.server.idle))
    try:
        try:
            ready = await unless_interrupted(start_mesh(launcher), job.stopping)
            said(log, f"meshdbg: {launcher.size} rank{'s' if launcher.size != 1 else ''} ready in {ready:.2f} s (mesh {shape}, server "
                      f"{launcher.server.connection.addr})")
            if ides is not None:
                dap = await serve_ides(launcher, ides)
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
            wait_s = None if interactive or args.no_post_mortem or not args.post_mortem_wait else args.post_mortem_wait
            if wait_s is not None:  # (no one may be watching: a crashed rank would hold the job for good)
                unattended = asyncio.create_task(launcher.end_unattended_post_mortems(wait_s))
            watcher = asyncio.create_task(watch_stops(launcher.server, interactive, job, wait_s))
            status = await unless_interrupted(launcher.wait(), job.stopping)
        except Interrupted:
            await close_console(job, watcher)
            said(log, f"meshdbg: {job.why}; stopping the mesh")
            await launcher.stop()
            if launcher.first_failure is not None and launcher.stop_on_failure:
                # A failure whose stop waited for a rank being debugged: the job failed, first, there.
                said(log, failure_line(launcher, args.keep_going), logging.WARNING)
                return launcher.first_failure[1]
            return INTERRUPTED
        await close_console(job, watcher)
        if launcher.first_failure is not None:
            said(log, failure_line(launcher, args.keep_going), logging.WARNING)
        elif job.console_shown:  # (the console's last line was about a rank it let run, and nothing came after)
            said(log, f"meshdbg: the job ended: {how_ranks_ended(launcher.exits, launcher.lost_ranks)}")
        return status
    finally:
        collector.cancel()
        if unattended is not None:
            unattended.cancel()
        await close_console(job, watcher)
        if dap is not None:
            await dap.close()
        elif ides is not None:
            ides.close()
        await launcher.close()


async def serve_ides(launcher: MeshLauncher, listener: socket.socket) -> DapServer:
    """`--dap`: a DAP server on `listener` over the job's own server, announced on stderr; it
    follows the mesh until closed."""
    dap = await DapServer.beside(launcher.server, listener, launcher.output)
    dap.announce(sys.stderr)
    dap.mesh.spawn(dap.follow())
    return dap


def failure_line(launcher: MeshLauncher, keep_going: bool) -> str:
    """The run's last line when a rank failed: which one, how, and what became of the others
    (`the mesh was stopped` only when some still ran: it said so of ranks that had ended
    before the failure, status 0)."""
    assert launcher.first_failure is not None
    rank, status = launcher.first_failure
    how = launcher.how_failed(rank, status)
    if launcher.size == 1:
        return f"meshdbg: rank {rank} failed ({how})"
    if not launcher.running_at_first_failure:
        consequence = "the other ranks had ended"
    else:
        consequence = "the other ranks ran on" if keep_going else "the mesh was stopped"
    others = how_ranks_ended({r: s for r, s in launcher.exits.items() if r != rank}, launcher.lost_ranks)
    return f"meshdbg: rank {rank} failed first ({how}); {consequence}{': ' + others if others else ''}"


def how_ranks_ended(exits: dict[int, int], lost: Collection[int] = ()) -> str:
    """`ranks 0-2 SIGTERM, rank 3 status 0`: exit statuses (as a shell reports them) by rank,
    grouped (`host lost` for the `lost` ranks); the console's announcements of them may have
    been cut short by the job's end."""
    by_ending: dict[str, list[int]] = {}
    for rank, status in sorted(exits.items()):
        by_ending.setdefault(HOST_LOST if rank in lost else status_text(status), []).append(rank)
    return ", ".join(f"{ranks_text(ranks)} {ending}" for ending, ranks in by_ending.items())


async def close_console(job: Job, watcher: asyncio.Task[None] | None) -> None:
    """End the job for the console: it closes itself (restoring the terminal); cancel it only
    if it has not within CONSOLE_CLOSE_S."""
    job.ended.set()
    if watcher is None or watcher.done():
        return
    done = (await asyncio.wait([watcher], timeout=CONSOLE_CLOSE_S))[0] if job.console_open else set()
    if not done:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) came before what `unless_interrupted` waited for."""


async def unless_interrupted(awaitable: Awaitable[T], interrupted: asyncio.Event) -> T:
    """The result of `awaitable`, or Interrupted (and `awaitable` cancelled) once `interrupted` is set."""
    task = asyncio.ensure_future(awaitable)
    if task in await first_of(task, interrupted.wait()):
        return task.result()
    raise Interrupted


async def start_mesh(launcher: MeshLauncher) -> float:
    """Start every rank and wait until each registered (or exited); seconds it took. Every
    SLOW_START_S meanwhile, say which ranks it still waits for (a rank stuck before it could
    register, in the interpreter's start or a slow file system, left the run silent)."""
    async def start_and_wait() -> float:
        await launcher.start()
        return await launcher.wait_ready()

    ready = asyncio.ensure_future(start_and_wait())
    try:
        while not (await asyncio.wait([ready], timeout=SLOW_START_S))[0]:
            if not launcher.placed:
                continue  # (the placer says which hosts it waits for)
            waiting = launcher.not_ready()
            said(log, f"meshdbg: {launcher.size - len(waiting)} of {launcher.size} ranks ready after "
                      f"{time.monotonic() - launcher.started_at:.0f} s; waiting for {ranks_text(waiting)} "
                      f"(`meshdbg list --all` shows them; Ctrl-C stops the job)")
        return ready.result()
    finally:
        ready.cancel()


async def watch_stops(server: InProcessServer, interactive: bool, job: Job, post_mortem_wait: float | None = None
                      ) -> None:
    """Open the console at a rank's stop (terminal), else say how to attach (and, with
    `post_mortem_wait`, how long a post-mortem waits for that).

    A console closed with quit or Ctrl-D leaves the sessions it saw paused; it opens again at
    the next new stop, never for one it has already shown. Like every console, it reaches the
    sessions only through the control API (a client of our own server), and so does the
    job's Ctrl-C that interrupts the rank the console let run.
    """
    async with ControlClient.beside(server) as client:
        live: set[int] = set()  # the open sessions, as the server's watch says now
        stops: asyncio.Queue[SessionView | None] = asyncio.Queue()
        follower = asyncio.create_task(_follow(client, live, stops))
        job.interrupt_rank = lambda rank: client.interrupt(str(rank))
        seen: set[int] = set()
        try:
            while (session := await stops.get()) is not None:
                if session.id in seen or job.ended.is_set():
                    continue
                if session.id not in live:
                    continue  # over already (a stop queued while a console was open): not a stop to open for
                if interactive:
                    job.closed_by_user = False
                    await open_console(server, session.rank, job)  # gives SIGINT back to the job
                    if job.closed_by_user:  # what it left paused stays so; a stop since it went idle opens it again
                        seen.update(live)
                    if job.ended.is_set():
                        return
                else:
                    seen.add(session.id)
                    print(stop_notice(session, post_mortem_wait), file=sys.stderr, flush=True)
        finally:
            job.interrupt_rank = None
            follower.cancel()
            await asyncio.gather(follower, return_exceptions=True)


async def _follow(client: ControlClient, live: set[int], stops: asyncio.Queue[SessionView | None]) -> None:
    """Keep `live` current from the server's watch, even while a console is open, and queue
    every stopped session as it comes; None once the watch ends (the server stopped)."""
    try:
        async for kind, view, _ in client.watch():
            if not isinstance(view, SessionView) or kind is WatchKind.SYNCED:
                continue
            if kind is WatchKind.CLOSED:
                live.discard(view.id)
                continue
            live.add(view.id)
            if view.state is State.STOPPED:
                stops.put_nowait(view)
    except MeshdbgError:
        pass  # the server went away: the job is over
    finally:
        stops.put_nowait(None)


async def open_console(server: InProcessServer, rank: int, job: Job) -> None:
    """The console over our own server, in the pdb of the rank that stopped, until every rank
    runs again, the console is closed, or the job ends."""
    from meshdbg.debugger.console import run_console

    job.console_open = job.console_shown = True
    try:
        async with ControlClient.beside(server) as client:
            await run_console(client, attach_rank=rank, exit_when_idle=True, job=job)
    finally:
        job.console_open = False


def stop_notice(session: SessionView, post_mortem_wait: float | None = None) -> str:
    """One line: which rank stopped where, and the command that attaches to it (as `serve` says
    it); for a post-mortem with `post_mortem_wait`, how long it waits for that."""
    item = News().feed(WatchKind.UPDATED, session, None)
    if item is None:
        return ""
    waits = (f" (within {post_mortem_wait:g} s, or it ends: --post-mortem-wait)"
             if post_mortem_wait is not None and session.reason == StopReason.POST_MORTEM else "")
    return f"meshdbg: {item.text()}{waits}"
