"""The package's layers: worker side → wire ← central side, host agent → worker side and wire,
and nothing of ours at top level.

Each probe runs in a fresh interpreter, from a folder that is not the repository, so only the
installed `meshdbg` package can be imported.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules(folder: str) -> list[str]:
    """Every module under a top-level folder of the repository, by its `meshdbg.` name."""
    names = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1]
        names.append(".".join(("meshdbg", *parts)))
    return sorted(set(names))


def _loaded_after_import(modules: list[str], tmp_path: Path) -> set[str]:
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "print('\\n'.join(sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


TORCH_MODULES = tuple(f"meshdbg.worker.pipelining.{name}" for name in ("runtime", "split_backward", "toymodel"))
WORKER_SIDE = [m for m in _modules("worker") if not m.startswith(TORCH_MODULES)]


def test_worker_side_imports_nothing_of_the_central_side(tmp_path: Path) -> None:
    loaded = _loaded_after_import(WORKER_SIDE, tmp_path)
    central = sorted(m for m in loaded if m.startswith(("meshdbg.debugger", "prompt_toolkit", "pygments")))
    assert central == [], f"worker-side modules pulled in {central}"


def test_host_agent_imports_nothing_of_the_central_side(tmp_path: Path) -> None:
    loaded = _loaded_after_import(_modules("host"), tmp_path)
    central = sorted(m for m in loaded if m.startswith(("meshdbg.debugger", "prompt_toolkit", "pygments")))
    assert central == [], f"host-side modules pulled in {central}"


def test_wire_imports_neither_side(tmp_path: Path) -> None:
    loaded = _loaded_after_import(_modules("wire"), tmp_path)
    assert sorted(m for m in loaded if m.startswith(("meshdbg.debugger", "meshdbg.worker"))) == []


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
    on_disk = {"meshdbg"} | {".".join(("meshdbg", *init.parent.relative_to(ROOT).parts))
                             for folder in ("wire", "worker", "debugger", "host") for init in (ROOT / folder).rglob("__init__.py")}
    assert declared == on_disk


@pytest.mark.parametrize("alias", ["meshdbg.set_trace", "meshdbg.worker.remote_breakpointhook"])
def test_breakpoint_hook_names_resolve(alias: str, tmp_path: Path) -> None:
    module, _, name = alias.rpartition(".")
    code = f"import {module} as m, meshdbg.worker.hook as h; print(getattr(m, {name!r}) is h.remote_breakpointhook)"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "True", done.stderr
