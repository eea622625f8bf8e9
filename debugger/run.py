"""`meshdbg run`: a DebugClient and a mesh of workers in one command, and the console on demand.

    meshdbg run --mesh hosts=2,gpus=4 train.py --lr 3e-4
    meshdbg run --mesh pp=4 -m mypkg.train

With a terminal, the console opens by itself when a rank first stops in pdb and closes back
to the logs once every rank runs again; without one, each stop prints how to attach. The exit
status is the first failing rank's (130 after Ctrl-C, which stops the whole mesh).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.machinery
import importlib.util
import os
import signal
import sys
from typing import Awaitable, TypeVar

from meshdbg.debugger.control import ControlClient
from meshdbg.wire.errors import UsageError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.coords import format_coords, identity_coords
from meshdbg.wire.vocabulary import State, StopReason
from meshdbg.debugger.mesh.launcher import MeshLauncher
from meshdbg.debugger.mesh.shape import DEFAULT_SHAPE, MeshShape

INTERRUPTED = 130
T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mesh", metavar="DIM=SIZE,...", help=f"mesh shape, ranks row-major (default: "
                        f"{format_coords(DEFAULT_SHAPE)}), e.g. hosts=2,gpus=4")
    parser.add_argument("--name", default="worker", help="MESHDBG_NAME of every rank (default: worker)")
    parser.add_argument("--no-post-mortem", action="store_true",
                        help="let uncaught exceptions end a rank without a post-mortem session")
    parser.add_argument("--keep-going", action="store_true", help="a failing rank does not stop the others")
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE [ARGS]",
                        help="run a module, like python -m")
    parser.add_argument("script", nargs=argparse.REMAINDER, metavar="SCRIPT [ARGS]",
                        help="the script every rank runs (or a directory or zip file with __main__.py)")


def target_argv(args: argparse.Namespace) -> list[str]:
    """The bootstrap argv for the target: `SCRIPT ARGS...` or `-m MODULE ARGS...`.

    A target that cannot run is a usage error here, before any rank starts.
    """
    if args.module is not None:
        if not args.module:
            raise UsageError("-m needs a module name, e.g. meshdbg run -m mypkg.train")
        check_module(args.module[0])
        return ["-m", *args.module]
    if not args.script:
        raise UsageError("run needs a script or -m MODULE, e.g. meshdbg run --mesh hosts=2,gpus=4 train.py")
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


async def main(args: argparse.Namespace) -> int:
    argv = target_argv(args)
    shape = MeshShape.parse(args.mesh) if args.mesh else MeshShape.of(DEFAULT_SHAPE)
    launcher = MeshLauncher(shape, argv, name=args.name, post_mortem=not args.no_post_mortem,
                            stop_on_failure=not args.keep_going)
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupted.set)
    watcher: asyncio.Task[None] | None = None
    try:
        try:
            ready = await unless_interrupted(start_mesh(launcher), interrupted)
            print(f"meshdbg: {launcher.size} ranks ready in {ready:.2f} s (mesh {shape}, server "
                  f"{launcher.server.connection.addr})", file=sys.stderr, flush=True)
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
            watcher = asyncio.create_task(watch_stops(launcher, interactive))
            status = await unless_interrupted(launcher.wait(), interrupted)
        except Interrupted:
            print("meshdbg: interrupted; stopping the mesh", file=sys.stderr, flush=True)
            await launcher.stop()
            return INTERRUPTED
        if launcher.first_failure is not None:
            rank, first_status = launcher.first_failure
            consequence = "the other ranks ran on" if args.keep_going else "the mesh was stopped"
            print(f"meshdbg: rank {rank} failed first (exit status {first_status}); {consequence}",
                  file=sys.stderr, flush=True)
        return status
    finally:
        if watcher is not None:
            watcher.cancel()
        await launcher.close()


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) came before what `unless_interrupted` waited for."""


async def unless_interrupted(awaitable: Awaitable[T], interrupted: asyncio.Event) -> T:
    """The result of `awaitable`, or Interrupted (and `awaitable` cancelled) once `interrupted` is set."""
    task = asyncio.ensure_future(awaitable)
    stop = asyncio.ensure_future(interrupted.wait())
    try:
        await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not task.done():
            task.cancel()
    if task.done():
        return task.result()
    raise Interrupted


async def start_mesh(launcher: MeshLauncher) -> float:
    """Start every rank and wait until each registered (or exited); seconds it took."""
    await launcher.start()
    return await launcher.wait_ready()


async def watch_stops(launcher: MeshLauncher, interactive: bool) -> None:
    """Open the console at a rank's first stop (terminal), else say how to attach."""
    registry = launcher.server.registry
    announced: set[int] = set()
    async for event in registry.watch():
        if event.session.state != State.STOPPED.pb or event.session.id in announced:
            continue
        if interactive:
            await open_console(launcher, event.session.identity.rank)
            announced.update(s.id for s in registry.sessions())
        else:
            announced.add(event.session.id)
            print(stop_notice(event.session), file=sys.stderr, flush=True)


async def open_console(launcher: MeshLauncher, rank: int) -> None:
    """The console over our own server, in the pdb of the rank that stopped, until every rank runs again."""
    from meshdbg.debugger.console import run_console

    async with ControlClient(launcher.server.connection) as client:
        await run_console(client, attach_rank=rank, exit_when_idle=True)


def stop_notice(session: pb.SessionInfo) -> str:
    """One line: which rank stopped where, and the command that attaches to it."""
    ident, frame, rank = session.identity, session.frame, session.identity.rank
    where = f"{os.path.basename(frame.filename)}:{frame.lineno}" if frame.filename else "?"
    coords = format_coords(identity_coords(ident))
    return (f"meshdbg: rank {rank} ({coords}) stopped in pdb at {where} ({StopReason.of(ident.reason)}); "
            f"attach with: meshdbg attach {rank}")
