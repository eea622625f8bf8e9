"""What every mesh worker runs: register, then run the script, the module, or the actor host.

    python -m meshdbg.worker.mesh.bootstrap SCRIPT [ARGS...]        like `python SCRIPT ARGS...`
    python -m meshdbg.worker.mesh.bootstrap -m MODULE [ARGS...]     like `python -m MODULE ARGS...`
    python -m meshdbg.worker.mesh.bootstrap -m pdb [-c continue] (SCRIPT | -m MODULE) [ARGS...]
                                                                    like `python -m pdb ...` (`under_pdb`)
    python -m meshdbg.worker.mesh.bootstrap --actors                serve actor calls until told to stop

(The launcher's fork server calls `main` directly.) The worker opens its agent stream first,
so the DebugClient lists it from the start; `breakpoint()` opens a remote session and an
agent interrupt stops the main thread in pdb. An uncaught exception prints its traceback,
then opens a post-mortem session on this rank before the worker exits with status 1, unless
MESHDBG_POST_MORTEM=0. Works under torchrun, SLURM or mpirun too, e.g.
`torchrun --nproc-per-node 4 -m meshdbg.worker.mesh.bootstrap train.py`.
"""

from __future__ import annotations

import getopt
import io
import os
import runpy
import sys
import threading
import traceback
import types
from importlib.machinery import SourceFileLoader
from pkgutil import get_importer, read_code
from typing import Callable

from meshdbg.worker import dependencies  # noqa: F401  (first: gRPC and protobuf as installed, not the job's)
from meshdbg.wire.connection import resolve_connection
from meshdbg.wire.environment import POST_MORTEM
from meshdbg.wire.errors import MeshdbgError, UsageError
from meshdbg.wire.vocabulary import StopReason
from meshdbg.worker.context import context_of
from meshdbg.worker.hook import install, post_mortem, stop_in_next_call
from meshdbg.worker.identity import detect_identity
from meshdbg.worker.mesh.actor import ActorHost, without_leading_frames
from meshdbg.worker.mesh.agent import Agent, install_interrupt_handler
from meshdbg.worker.notices import say, setting
from meshdbg.worker.stdio_numbers import StandardNumbersHeld

ACTORS = "--actors"
USAGE = "usage: python -m meshdbg.worker.mesh.bootstrap (SCRIPT | -m MODULE | -c CODE | --actors) [ARGS...]"
# What `python -m MODULE` and `python FOLDER_OR_ZIP` call: not in runpy's documented API (nor in its stubs)
RUN_MODULE_AS_MAIN: Callable[..., object] = getattr(runpy, "_run_module_as_main")
OWN_FILES = (__file__, runpy.run_path.__code__.co_filename)  # the frames before the user's (runpy may be frozen)


def exit_status(code: object) -> int:
    """The process status for `sys.exit(code)`, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_as_python_does(argv: list[str]) -> None:
    """Run `SCRIPT ARGS...`, `-m MODULE ARGS...` or `-c CODE ARGS...` as `python` runs it, in a
    module of its own that stays __main__ once its code returns, for its threads (pickle finds
    their classes there; runpy.run_path and run_module put the launcher's module back, which
    broke that):
    - a script file: compiled with its absolute path as Python 3.9+ does (its __file__, its
      tracebacks, pdb's positions), sys.argv[0] as given, sys.path[0] its folder;
    - `-m MODULE`, a directory or a zip file: through RUN_MODULE_AS_MAIN, the function `python`
      itself calls for them (the same sys.argv, sys.path and error lines, such as
      "No module named x" or "can't find '__main__' module in 'dir'");
    - `-c CODE`: compiled as `<string>`, sys.argv[0] `-c`, sys.path[0] '' (the current folder).
    A script that cannot be read exits with status 2 and Python's one line, not a traceback."""
    sys.modules["__main__"] = main = types.ModuleType("__main__")
    if argv[0] == "-c":
        sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
        exec(compile(argv[1], "<string>", "exec"), main.__dict__)
        return
    if argv[0] == "-m":
        sys.argv, sys.path[0] = argv[1:], os.getcwd()
        RUN_MODULE_AS_MAIN(argv[1])  # sets sys.argv[0] to the module's file, as `python -m`
        return
    sys.argv = list(argv)
    path = os.path.abspath(argv[0])
    if get_importer(path) is not None:  # a directory or a zip file: its __main__ module
        sys.path[0] = path
        RUN_MODULE_AS_MAIN("__main__", alter_argv=False)
        return
    sys.path[0] = os.path.dirname(path)
    main.__dict__.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path))
    try:
        with io.open_code(path) as source:
            code = read_code(source)  # a compiled script (.pyc), as Python runs one
            if code is None:
                source.seek(0)
                code = compile(source.read(), path, "exec")
    except OSError as exc:
        print(f"meshdbg: can't open file {path!r}: [Errno {exc.errno}] {exc.strerror}", file=sys.stderr)
        raise SystemExit(2) from None
    exec(code, main.__dict__)


CONTINUING = frozenset({"c", "cont", "continue"})  # pdb's -c commands that only let the program run


def under_pdb(argv: list[str]) -> tuple[list[str], bool]:
    """`[-c CMD]... [-m] TARGET ARGS...` (what follows `-m pdb`, parsed as pdb parses it) as the
    target that `python -m pdb` runs, and whether it stops at its first line, as there: local
    pdb would read the rank's stdin, which has no terminal (it quit at once and the program
    never ran). An uncaught error opens a post-mortem session, as pdb's does; the program is
    not restarted when it ends. Of pdb's commands only `-c continue` (no first-line stop);
    UsageError else."""
    try:
        options, target = getopt.getopt(argv, "mhc:", ["help", "command="])
    except getopt.GetoptError as exc:
        raise UsageError(f"pdb: {exc}") from None
    commands = [value for option, value in options if option in ("-c", "--command")]
    unknown = [command for command in commands if command.strip() not in CONTINUING]
    if unknown:
        raise UsageError(f"pdb's -c {unknown[0]!r}: only `-c continue` here (type pdb's commands at its prompt)")
    if not target or any(option in ("-h", "--help") for option, _ in options):
        raise UsageError("usage: -m pdb [-c continue] (SCRIPT | -m MODULE) [ARGS...]")
    module = any(option == "-m" for option, _ in options)
    return (["-m", *target] if module else target), not commands


def runs_main_module(frame: types.FrameType) -> bool:
    """`frame` runs the code of the program's __main__ module (a script's, `-m MODULE`'s)."""
    return frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__"


def run_target(argv: list[str], with_post_mortem: bool) -> int:
    """Run a script or `-m module` as __main__; its exit status."""
    try:
        run_as_python_does(argv)
    except SystemExit as exc:
        return exit_status(exc.code)
    except BaseException as exc:  # the script's uncaught error: report it like the interpreter does
        tb = without_leading_frames(exc.__traceback__, *OWN_FILES)
        traceback.print_exception(type(exc), exc, tb)
        if with_post_mortem and not isinstance(exc, KeyboardInterrupt) and tb is not None:
            post_mortem(tb, context_of(exc))
        return 1
    return 0


def run_target_under_pdb(argv: list[str], with_post_mortem: bool) -> int:
    """`python -m pdb ARGV...` in a rank: the target `under_pdb` says, stopped at its first line
    in a meshdbg session unless told to continue; status 2 (and why) for what it cannot do."""
    try:
        target, first_line = under_pdb(argv)
    except UsageError as exc:
        print(f"meshdbg: {exc}", file=sys.stderr)
        return 2
    if first_line:
        stop_in_next_call(runs_main_module, StopReason.BREAKPOINT)
    return run_target(target, with_post_mortem)


def wait_for_threads() -> None:
    """Wait for the script's non-daemon threads, as the interpreter does at exit, but before it
    starts finalizing: from then on Python 3.12 starts no thread, and a session needs some
    (gRPC's, its reader), so a `breakpoint()` in such a thread could not stop."""
    while True:
        others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
        if not others:
            return
        for thread in others:
            thread.join()


def connect_agent() -> Agent | None:
    """Register with the DebugClient; None (and a note on stderr) when it is unreachable."""
    try:
        return Agent(resolve_connection, detect_identity())
    except MeshdbgError as exc:
        say(f"meshdbg: no agent stream ({exc}); running without it\n")
        return None


def serve_actors(agent: Agent | None, with_post_mortem: bool) -> int:
    if agent is None:
        return 1
    host = ActorHost(with_post_mortem)
    while (command := agent.calls.get()) is not None:
        agent.send_result(host.handle(command))
    return 0


def main(argv: list[str]) -> int:
    """Run one worker; its exit status."""
    if not argv or (argv[0] in ("-m", "-c") and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    with StandardNumbersHeld():  # (the agent's descriptors above 2: meshdbg.worker.stdio_numbers)
        agent = connect_agent()
    install_interrupt_handler()
    install()
    with_post_mortem = setting(POST_MORTEM)
    if argv[0] == ACTORS:
        status = serve_actors(agent, with_post_mortem)
    else:
        if argv[:2] == ["-m", "pdb"]:
            status = run_target_under_pdb(argv[2:], with_post_mortem)
        else:
            status = run_target(argv, with_post_mortem)
        wait_for_threads()
    if agent is not None:
        agent.close(status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
