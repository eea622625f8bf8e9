"""Pause-safe collectives wherever the hook is set, not only in bootstrapped ranks.

A rank paused in pdb keeps its peers waiting in their next collective; the server extends
every process group's timeout meanwhile (meshdbg.worker.collectives), through each worker's
agent stream. Ranks that `meshdbg run` (or the bootstrap) starts have one; ranks that torchrun,
Slurm or mpirun start with nothing but `PYTHONBREAKPOINT=meshdbg.set_trace` had none, so their
groups kept their short timeouts. As coverage.py starts in every process through a `.pth` file
when its variable is set, meshdbg.pth (installed at the top of site-packages) calls `arm()` at
start-up in every process whose PYTHONBREAKPOINT names meshdbg. `arm()` imports nothing: it
waits for torch.distributed to be imported, then wraps its init_process_group so that once the
process has its default group it opens an agent stream (unless it has one). A process that
cannot reach a server is left alone, silently: its breakpoint() will say why when it matters.

The same processes' `import pdb; pdb.set_trace()` and `pdb.post_mortem()` open meshdbg sessions
as `breakpoint()` does: a rank that torchrun, srun or a `multiprocessing` pool starts has no
terminal of its own for local pdb, which read the end of its input (set_trace's quit with
BdbQuit and failed the rank). `arm()` waits for pdb to be imported too; the first call loads
meshdbg's hook, which then takes both over (meshdbg.worker.hook.route_pdb).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from types import ModuleType
from typing import Any, Callable

DISTRIBUTED = "torch.distributed"
PDB = "pdb"
MARK = "_meshdbg_registers"  # on our wrapper: never wrapped twice
LOCAL = "_meshdbg_local"  # on our stand-in for pdb.Pdb.set_trace: the one it stands in for
_lock = threading.Lock()


def arm() -> None:
    """Wrap torch.distributed.init_process_group, and route pdb's set_trace and post_mortem,
    as soon as each module is imported (one finder waits for both)."""
    waiting: dict[str, Callable[[ModuleType], None]] = {}
    for name, wrap in ((DISTRIBUTED, _wrap), (PDB, _route_pdb)):
        if name in sys.modules:
            wrap(sys.modules[name])
        else:
            waiting[name] = wrap
    if waiting and not any(isinstance(finder, _OnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OnImport(waiting))


class _OnImport:
    """A meta-path finder that finds nothing itself: it lets the real finder find each module
    it waits for, and has the module wrapped once it has run; it leaves once none is left."""

    def __init__(self, waiting: dict[str, Callable[[ModuleType], None]]) -> None:
        self._waiting = waiting

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        wrap = self._waiting.pop(name, None)
        if wrap is None:
            return None
        if not self._waiting:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            run = spec.loader.exec_module

            def exec_module(module: ModuleType) -> None:
                run(module)
                wrap(module)

            spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _route_pdb(pdb: ModuleType) -> None:
    """pdb's set_trace and post_mortem, and pdb.Pdb's set_trace, load meshdbg's hook at their
    first call, which routes them to meshdbg from then on (nothing is imported before)."""
    def set_trace(*args: Any, header: str | None = None, **kwargs: Any) -> None:
        from meshdbg.wire.vocabulary import StopReason

        with contextlib.suppress(ImportError):
            _routed(pdb).stop_at(sys._getframe(1), StopReason.BREAKPOINT, header)

    def post_mortem(t: Any = None) -> None:
        with contextlib.suppress(ImportError):
            _routed(pdb).pdb_post_mortem(t)

    local_set_trace = pdb.Pdb.set_trace

    def instance_set_trace(self: Any, frame: Any = None, **kwargs: Any) -> None:
        try:
            _routed(pdb)  # (the hook's own set_trace of pdb.Pdb decides from now on)
        except ImportError:
            return local_set_trace(self, frame, **kwargs)
        return pdb.Pdb.set_trace(self, frame or sys._getframe(1), **kwargs)

    setattr(instance_set_trace, LOCAL, local_set_trace)
    setattr(pdb, "set_trace", set_trace)
    setattr(pdb, "post_mortem", post_mortem)
    setattr(pdb.Pdb, "set_trace", instance_set_trace)


def _routed(pdb: ModuleType) -> ModuleType:
    """meshdbg's hook, having routed `pdb` to itself; ImportError (said on stderr) when it
    cannot load, as `breakpoint()` warns and runs on then."""
    try:
        from meshdbg.worker import hook
    except ImportError as exc:
        sys.stderr.write(f"meshdbg: pdb cannot stop here ({exc}); continuing\n")
        raise
    hook.route_pdb(pdb)
    return hook


def _wrap(distributed: ModuleType) -> None:
    init = getattr(distributed, "init_process_group", None)
    if init is None or getattr(init, MARK, False):
        return
    wrapped = _registering(init)
    setattr(distributed, "init_process_group", wrapped)  # patching a module: setattr says so
    c10d = sys.modules.get(f"{DISTRIBUTED}.distributed_c10d")
    if c10d is not None and c10d.init_process_group is init:  # init_device_mesh calls it from there
        setattr(c10d, "init_process_group", wrapped)


def _registering(init: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(init)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = init(*args, **kwargs)
        register()
        return result

    setattr(init_process_group, MARK, True)
    return init_process_group


def register() -> None:
    """Open this process's agent stream, once (nothing when it has one or no server answers)."""
    from meshdbg.wire.connection import resolve_connection
    from meshdbg.wire.errors import MeshdbgError
    from meshdbg.worker.identity import detect_identity
    from meshdbg.worker.mesh import agent

    with _lock:
        if agent.Agent.opened:
            return
        try:
            agent.Agent(resolve_connection, detect_identity())
        except MeshdbgError:
            return
        if threading.current_thread() is threading.main_thread():
            import signal

            if signal.getsignal(agent.INTERRUPT_SIGNAL) in (signal.SIG_DFL, None):
                agent.install_interrupt_handler()  # `meshdbg interrupt` reaches this rank too
