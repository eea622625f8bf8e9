"""The package's layers: wire ← worker side ← host agent ← central side, and nothing of ours at
top level; the console and the IDE server reach sessions only through the control API.

Every module of the package is found by walking it (no list of modules is kept here) and must
belong to a package that RULES names. Each rule is checked twice: on the import graph read from
the source (every import statement, also those inside functions, followed to the end), and in a
fresh interpreter that imports every module of the package (what really loads, third-party
libraries and dynamic imports included). Probes run from a folder that is not the repository,
so only the installed `meshdbg` package can be imported.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_THE_PACKAGE = {"setup.py"}  # the build script, beside the package's own top-level modules

CENTRAL_LIBRARIES = ("prompt_toolkit", "pygments")  # the console's
CENTRAL = ("meshdbg.debugger", *CENTRAL_LIBRARIES)
REGISTRIES = ("meshdbg.debugger.sessions", "meshdbg.debugger.workers")  # what the server holds sessions in

# package → what none of its modules may import or load, directly or through others (a name
# stands for itself and everything under it). A module keeps the rules of every package it is
# in; its own package, and the packages around that, are never forbidden to it.
RULES: dict[str, tuple[str, ...]] = {
    "meshdbg.wire": ("meshdbg.worker", "meshdbg.host", *CENTRAL),  # the layer both sides import
    "meshdbg.wire.proto": ("meshdbg",),  # generated: nothing of ours but itself
    "meshdbg.worker": ("meshdbg.host", *CENTRAL),  # runs inside every worker
    "meshdbg.host": CENTRAL,  # a node's agent forks workers, never the console
    "meshdbg.debugger": (),  # the central side may import every layer
    "meshdbg.debugger.console": REGISTRIES,  # a client of the control API
    "meshdbg.debugger.dap": REGISTRIES,  # a client of the control API, like the console
}
TOP_LEVEL = ("meshdbg", "meshdbg.__main__")  # import nothing at import time (tested apart)
RUN = "meshdbg.debugger.run"
LAUNCHER = "meshdbg.debugger.mesh"  # owns the server of a `meshdbg run`
ASKED_OF_THE_SERVER = {"connection", "idle"}  # all `run` and the console may read off a server object


@functools.cache
def modules() -> dict[str, Path]:
    """Every module of the package by its `meshdbg.` name: each .py file in a folder that is a
    package from the repository root down."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        folder = path.parent
        if path.relative_to(ROOT).as_posix() in NOT_THE_PACKAGE or not all(
                (parent / "__init__.py").exists() for parent in (folder, *folder.parents) if parent.is_relative_to(ROOT)):
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(("meshdbg", *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    return found


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def home(module: str) -> str | None:
    """The most specific package of RULES that `module` is in."""
    return max((package for package in RULES if _within(module, package)), key=len, default=None)


def hits(names: set[str], module: str) -> list[str]:
    """The names of `names` that the rules of `module` (a module or a package) forbid it."""
    package = home(module) or module
    own = {package, *(".".join(package.split(".")[:i]) for i in range(1, package.count(".") + 1))}
    forbidden = [name for outer, names in RULES.items() if _within(module, outer) for name in names]
    return sorted(n for n in names if not _within(n, package) and n not in own and any(_within(n, f) for f in forbidden))


@functools.cache
def syntax(module: str) -> ast.Module:
    return ast.parse(modules()[module].read_text(), filename=str(modules()[module]))


@functools.cache
def imports(module: str) -> frozenset[str]:
    """The modules of ours that `module` names in any import statement, anywhere in it."""
    known = modules()
    named: set[str] = set()
    for node in ast.walk(syntax(module)):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{module}: a relative import"
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in known)
    return frozenset(name for name in named if name in known)


def reached(start: set[str]) -> dict[str, str | None]:
    """Every module of ours that importing `start` can import (with the packages around each),
    and for each the module that imports it first, breadth first (None for `start`)."""
    by: dict[str, str | None] = dict.fromkeys(start)
    todo = list(start)
    while todo:
        name = todo.pop(0)
        packages = [".".join(name.split(".")[:i]) for i in range(2, name.count(".") + 1)]
        for other in (*sorted(imports(name)), *packages):
            if other not in by:
                by[other] = name
                todo.append(other)
    return by


def chain(by: dict[str, str | None], name: str) -> str:
    """`a → b → c`: how the start of `reached` comes to import `name`."""
    links = [name]
    while (before := by[links[-1]]) is not None:
        links.append(before)
    return " → ".join(reversed(links))


def test_every_module_is_under_a_rule() -> None:
    assert len(modules()) > 100 and {"meshdbg.debugger.console.app", "meshdbg.worker.pipelining.runtime"} <= set(modules())
    loose = sorted(m for m in modules() if m not in TOP_LEVEL and home(m) is None)
    assert loose == [], f"modules in no package of RULES (give their package a rule): {loose}"


@pytest.mark.parametrize("package", sorted(p for p, names in RULES.items() if names))
def test_imports_keep_to_the_rules(package: str) -> None:
    """Read from the source: each module, and all it imports in turn, stay out of what its rules forbid."""
    broken = []
    for module in (m for m in modules() if _within(m, package)):
        by = reached({module})
        broken += [chain(by, name) for name in hits(set(by), module)]
    assert broken == [], "imports that break the layering:\n" + "\n".join(sorted(broken, key=len)[:10])


def _loaded_after_import(modules: list[str], tmp_path: Path) -> set[str]:
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "print('\\n'.join(sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


@pytest.mark.parametrize("package", sorted(p for p, names in RULES.items() if names))
def test_importing_a_package_loads_nothing_its_rules_forbid(package: str, tmp_path: Path) -> None:
    """What really loads when every module of the package is imported at once."""
    members = [m for m in modules() if _within(m, package) and not m.endswith(".__main__")]  # a __main__ runs
    assert members, package
    assert hits(_loaded_after_import(members, tmp_path), package) == []


def _server_reads(module: str) -> set[str]:
    """The attributes `module` reads off anything called `server` (`launcher.server.x`, `server.x`)."""
    def is_server(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "server") or (isinstance(node, ast.Name) and node.id == "server")
    return {node.attr for node in ast.walk(syntax(module)) if isinstance(node, ast.Attribute) and is_server(node.value)}


def test_run_reaches_sessions_only_through_the_control_api() -> None:
    """`meshdbg run` owns its server through the launcher, and asks of it only its address and
    whether it is idle; the sessions it opens its console for, and the rank a Ctrl-C
    interrupts, it reaches through a control client, as any console does."""
    by = reached({m for m in imports(RUN) if not _within(m, LAUNCHER)})
    assert [chain(by, m) for m in sorted(by) if m.startswith(REGISTRIES)] == [], "run reaches a registry not through its launcher"
    assert _server_reads(RUN) <= ASKED_OF_THE_SERVER, f"run reads {_server_reads(RUN) - ASKED_OF_THE_SERVER} off its server"


@pytest.mark.parametrize("module", sorted(m for m in modules() if _within(m, "meshdbg.debugger.console")) + [RUN])
def test_no_registry_is_reached_through_an_attribute(module: str) -> None:
    attributes = {node.attr for node in ast.walk(syntax(module)) if isinstance(node, ast.Attribute)}
    assert "registry" not in attributes, f"{module} reads a session registry"
    assert _server_reads(module) <= ASKED_OF_THE_SERVER, f"{module} reads {_server_reads(module)} off a server"


def test_error_tree_imports_no_grpc(tmp_path: Path) -> None:
    loaded = _loaded_after_import(["meshdbg.wire.errors"], tmp_path)
    assert not any(m.split(".")[0] == "grpc" for m in loaded)


def test_importing_meshdbg_imports_no_layer(tmp_path: Path) -> None:
    loaded = _loaded_after_import(["meshdbg"], tmp_path)
    assert sorted(m for m in loaded if m.startswith("meshdbg.")) == []


def test_no_top_level_name_but_meshdbg(tmp_path: Path) -> None:
    code = "import importlib.util as u; print([n for n in ('worker', 'debugger', 'wire', 'proto') if u.find_spec(n)])"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "[]", done.stderr


def test_every_package_folder_is_packaged() -> None:
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert declared == on_disk


@pytest.mark.parametrize("alias", ["meshdbg.set_trace", "meshdbg.worker.remote_breakpointhook"])
def test_breakpoint_hook_names_resolve(alias: str, tmp_path: Path) -> None:
    module, _, name = alias.rpartition(".")
    code = f"import {module} as m, meshdbg.worker.hook as h; print(getattr(m, {name!r}) is h.remote_breakpointhook)"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "True", done.stderr
