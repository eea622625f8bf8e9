"""The `meshdbg` command: a table of verbs, each in a module of its own, loaded only when run.

Exit status (DESIGN §2): 0 success, 1 a command failed on some rank or nothing matched,
2 usage error, 3 no server reachable. Errors are one line on stderr, never a traceback.
Only the chosen verb's module is imported, so `meshdbg list --json` in a script costs little
more than starting Python with grpc (bench/bench_floor.py --only start).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import sys
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple

from meshdbg.debugger import grpc_engine
from meshdbg.wire.errors import MeshdbgError

if TYPE_CHECKING:
    from asyncio import AbstractEventLoop


class Verb(NamedTuple):
    """Where a verb lives: `module.add_arguments(parser)` and `module.<function>(args)`. (A
    named tuple: made in a fifth of a frozen dataclass's time, at every start of the CLI.)"""

    module: str
    help: str
    function: str = "main"
    lasts: bool = False  # runs until stopped (a server, the console, a stream): see `run`
    uvloop: bool = False  # runs on uvloop's event loop: see `execute`
    grpc: bool = True  # talks gRPC: loaded on the classic pollers first (see `parse`)


VERBS: dict[str, Verb] = {
    "serve": Verb("meshdbg.debugger.verbs.serve", "run a DebugClient for workers started by another launcher", lasts=True, uvloop=True),
    "run": Verb("meshdbg.debugger.run", "start a DebugClient and a mesh of workers running SCRIPT (or -m MODULE)", lasts=True, uvloop=True),
    "list": Verb("meshdbg.debugger.verbs.listing", "the sessions and their state"),
    "cast": Verb("meshdbg.debugger.verbs.cast", "run a pdb command on a set of ranks"),
    "continue": Verb("meshdbg.debugger.verbs.resume", "resume the selected (default: all) stopped ranks"),
    "stacks": Verb("meshdbg.debugger.verbs.stacks", "every selected rank's Python stack, running or stopped, as a merged tree"),
    "compare": Verb("meshdbg.debugger.verbs.compare", "evaluate EXPR on stopped ranks, grouped by equal value"),
    "interrupt": Verb("meshdbg.debugger.verbs.interrupt", "break the selected ranks into pdb (a running command: at its next line)"),
    "attach": Verb("meshdbg.debugger.verbs.attach", "open the interactive console (optionally in one rank's pdb)", lasts=True, uvloop=True),
    "watch": Verb("meshdbg.debugger.verbs.watch", "stream stops, crashes and exits as they happen", lasts=True, uvloop=True),
    "dap": Verb("meshdbg.debugger.verbs.dap", "a Debug Adapter Protocol server for IDEs over the whole mesh", lasts=True, uvloop=True),
    "host": Verb("meshdbg.debugger.verbs.host", "this node's agent for a multi-host run: meshdbg host --join URL", lasts=True),
    "hosts": Verb("meshdbg.debugger.verbs.hosts", "the hosts of a run and their state"),
    "servers": Verb("meshdbg.debugger.verbs.servers", "the live servers this user can reach"),
    "break": Verb("meshdbg.debugger.verbs.brk", "stop pipeline ranks right before an action (3B5, 3F*, *B5, W); --list, --clear"),
    "pipeline": Verb("meshdbg.debugger.verbs.pipeline", "where every pipeline rank is in its schedule, who waits for whom, why it stalls"),
    "schedule": Verb("meshdbg.worker.pipelining.cli", "generate or load (--load CSV) a pipeline schedule; simulate, print, dump it",
                     "run", grpc=False),
}


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The parser for `meshdbg VERB ...`: with a known `verb`, only that verb's sub-parser
    (with its arguments) is built, as each costs almost a millisecond of start-up (argparse
    looks up translations for every one); else every verb, by name and help, for the
    top-level help and the "invalid choice" error."""
    parser = argparse.ArgumentParser(prog="meshdbg", description="A distributed debugger for Python process meshes.")
    subparsers = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for name, entry in ([(verb, VERBS[verb])] if verb in VERBS else VERBS.items()):
        sub = subparsers.add_parser(name, help=entry.help, description=entry.help)
        if name == verb:
            module = importlib.import_module(entry.module)
            module.add_arguments(sub)
            sub.set_defaults(handler=getattr(module, entry.function))
    return parser


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """`argv` (default `sys.argv[1:]`) parsed, the chosen verb's module imported; gRPC loaded
    before it, on its classic pollers, for a verb that talks gRPC (meshdbg.debugger.grpc_engine)."""
    argv = sys.argv[1:] if argv is None else argv
    verb = argv[0] if argv else None
    if verb in VERBS and VERBS[verb].grpc:
        grpc_engine.load_grpc()
    return build_parser(verb).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return execute(parse(argv))


def execute(args: argparse.Namespace) -> int:
    """Run the verb `args` chose; its exit status (module docstring).

    The servers and consoles (`serve`, `run`, `attach`, `watch`, `dap`) run on uvloop's event
    loop: each round trip is several loop steps, each cheaper in uvloop's C loop than in
    asyncio's own (issue 22: the README's Speed section). A verb that returns in a moment keeps
    asyncio's loop, as importing uvloop would cost it more than it saves; so does the host
    agent (`host`), on no round trip's path (its py-spy, when uvloop's loop spawned it inside a
    host's namespaces, was killed by SIGABRT in 5 runs of 15; py-spy now starts from a thread
    in every process, meshdbg.host.pyspy).
    """
    import asyncio  # here, once `run` has turned the collector off: its import is most of this module's

    try:
        outcome = args.handler(args)
        if not asyncio.iscoroutine(outcome):
            return outcome
        factory = loop_factory(args.verb)
        with standard_fds_kept() if factory is not None else nullcontext(), asyncio.Runner(loop_factory=factory) as runner:
            return runner.run(outcome)
    except MeshdbgError as exc:
        print(f"meshdbg: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return interrupted()
    except BrokenPipeError:  # `meshdbg list | head`: the reader left, nothing to report
        sys.stdout = None
        return 0


def any_text_writable() -> None:
    """stdout and stderr write any text, escaping what their encoding cannot hold: what ranks
    print (values, names, paths, their log lines under `meshdbg run`) reaches a terminal or pipe
    whose encoding lacks it (PYTHONIOENCODING=ascii, a Latin-1 locale) as `\\xe9`. Strict, as
    Python leaves stdout, `p 'héllo'` was a traceback of `attach --plain` and `cast`."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def interrupted() -> int:
    """Ctrl-C before the verb was done: said in one line (never a traceback); exit status 130."""
    print("meshdbg: interrupted", file=sys.stderr)
    return 130


@contextmanager
def standard_fds_kept() -> Iterator[None]:
    """File descriptors 0-2 blocking or not at the end as they were found (for the verbs on uvloop).
    uvloop's watch of a descriptor makes it non-blocking (libuv's uv_poll_init), and the flag
    belongs to the terminal or pipe, shared with the shell and the programs after us: once
    `meshdbg run`'s console or `attach --plain` had read stdin, `cat` run after it failed
    with EAGAIN ("Resource temporarily unavailable")."""
    import os

    found = {}
    for fd in (0, 1, 2):
        try:
            found[fd] = os.get_blocking(fd)
        except OSError:  # not open
            pass
    try:
        yield
    finally:
        for fd, blocking in found.items():
            try:
                os.set_blocking(fd, blocking)
            except OSError:  # closed meanwhile
                pass


def loop_factory(verb: str) -> Callable[[], AbstractEventLoop] | None:
    """What makes the event loop `verb` runs on (see `execute`): uvloop's, or None (asyncio's
    own). bench/bench_floor.py runs `run`'s path on it too."""
    if not VERBS[verb].uvloop:
        return None
    from meshdbg.debugger.terminal_loop import TerminalLoop

    return TerminalLoop


def run() -> int:
    """The `meshdbg` console script and `python -m meshdbg`: `main()`, with the cyclic garbage
    collector kept out of the way (issue 22, bench/bench_floor.py --only start):

    * off while the verb runs, when it returns in a moment (`list`, `cast`, ...): loading gRPC,
      protobuf and our modules makes ~100,000 objects and no garbage, yet set off ~40
      collections (about 9 ms of a `meshdbg list --json`, 3 more than `import grpc` alone);
      a verb that `lasts` (a server, the console, a stream) gets it back once loaded, with
      what it loaded frozen (`gc.freeze`: no later collection walks it);
    * frozen once `main()` returns, so the interpreter's last collection at exit does not
      walk every object the verb made (18 ms of a 110 ms `meshdbg list --json`).
      Everything a verb opens it closes itself, so nothing waits on that collection.
    """
    gc.disable()
    any_text_writable()
    try:
        args = parse()  # loads gRPC and the verb's module: Ctrl-C lands here when pressed at once
    except KeyboardInterrupt:
        return interrupted()
    if VERBS[args.verb].lasts:
        gc.freeze()
        gc.enable()
    status = execute(args)
    gc.freeze()
    return status
