"""gRPC and protobuf, the worker side's dependencies, imported from where they are installed and
never from the job's own folder.

Python puts a job's folder first on sys.path (the script's, for `python train.py`; the current
one for `-m` and `-c`), so a job folder that holds a `grpc.py` or a `google/` package of its
own had it imported in their place at the first `breakpoint()`: the stop failed with the job's
error, where local pdb, which needs neither, stops. The worker side's entry points (the
breakpoint hook, the mesh bootstrap) import this module first: it imports both with those
folders left out of sys.path, then puts sys.path back as it was, so the job still finds its
own modules by those names. A job that already imported a module of its own by one of those
names (before its first stop) leaves the stop nothing to use: that is said on stderr (Python's
`breakpoint()` swallows its hook's ImportError, naming only the hook) and raised.

gRPC loaded here, where the job had not loaded it itself, loads with GRPC_VERBOSITY=ERROR unless
the user set the variable (meshdbg.wire.grpc_loading): gRPC writes INFO lines to stderr by
default, and a rank that forks while meshdbg's streams are open (a pool, a DataLoader's workers)
printed "Other threads are currently calling into gRPC, skipping fork() handlers" at every fork,
a line the job without meshdbg never has. Its errors still show.
"""

from __future__ import annotations

import importlib
import os
import sys
import sysconfig

from meshdbg.wire.grpc_loading import set_while_loading, verbosity_unless_set

NAMES = ("grpc", "google.protobuf")  # what the worker side imports that a job folder could hold


def job_folders() -> set[str]:
    """The folders Python may have put first on sys.path for the job: the current one, and the
    folder of the `__main__` script; never one Python's own library or installed packages are
    in. (`python -m cProfile train.py` runs with cProfile's module as `__main__`, in the
    standard library's folder: left out of sys.path, gRPC's `import logging` failed, and no
    `breakpoint()` of a profiled job could stop.)"""
    folders = set()
    try:
        folders.add(os.getcwd())
    except OSError:  # the current folder was deleted since the job went there: nothing to import from it
        pass
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    if script:
        folders.add(os.path.dirname(os.path.abspath(script)))
    return folders - _installation_folders()


def _installation_folders() -> set[str]:
    """Where Python's own library and installed packages are (sysconfig's scheme)."""
    paths = sysconfig.get_paths()
    return {os.path.abspath(paths[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}


def found_in(name: str, folders: set[str]) -> str | None:
    """The file of the imported module `name` when it was found in one of `folders` (as a
    module or a package there), else None."""
    where = getattr(sys.modules[name], "__file__", None)
    if not where:
        return None
    top = os.path.abspath(where)
    for _ in range(name.count(".") + 1 + (os.path.basename(top) == "__init__.py")):
        top = os.path.dirname(top)
    return where if top in folders else None


def _in(entry: str, folders: set[str]) -> bool:
    """Whether the sys.path entry `entry` is one of `folders`; a relative one whose current
    folder was deleted is taken for one (nothing can be imported from it now)."""
    try:
        return os.path.abspath(entry or os.curdir) in folders
    except OSError:
        return True


def load() -> None:
    """Import NAMES as installed; ImportError naming a job's own module that hides one."""
    folders = job_folders()
    saved = sys.path[:]
    sys.path[:] = [entry for entry in saved if not _in(entry, folders)]
    try:
        with set_while_loading({} if "grpc" in sys.modules else verbosity_unless_set("ERROR")):
            for name in NAMES:
                importlib.import_module(name)
    finally:
        sys.path[:] = saved
    for name in NAMES:
        hiding = found_in(name, folders)
        if hiding is not None:
            message = (f"meshdbg: cannot stop here: the job's own {name} ({hiding}), imported before its first "
                       f"stop, hides the installed one meshdbg needs; rename it")
            sys.stderr.write(message + "\n")
            raise ImportError(message)


load()
