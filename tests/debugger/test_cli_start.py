"""A client verb loads only what it uses: no launcher, console, scheduler or prompt_toolkit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("meshdbg.debugger.mesh", "meshdbg.debugger.run", "meshdbg.debugger.console", "meshdbg.debugger.service",
         "meshdbg.worker", "prompt_toolkit", "pygments", "secrets")


# What a listing does not use: the classes of what ranks answer and an attach (issue 22: each
# frozen dataclass costs a start ~1.5 ms).
NOT_LISTING = ("meshdbg.debugger.answers", "meshdbg.debugger.attached_session")


@pytest.mark.parametrize(("argv", "heavy"), [(["list", "--json"], HEAVY + NOT_LISTING), (["cast", "all", "p 1"], HEAVY),
                                            (["continue"], HEAVY + NOT_LISTING)])
def test_client_verbs_import_nothing_heavy(argv: list[str], heavy: tuple[str, ...], tmp_path: Path) -> None:
    code = ("import sys\nfrom meshdbg.debugger import cli\n"
            f"status = cli.main({argv!r})\n"
            f"print(status, sorted(m for m in sys.modules if m.startswith({heavy!r})))\n")
    env = dict(os.environ, MESHDBG_ADDR="127.0.0.1:1", MESHDBG_TOKEN="t")  # nothing listens on port 1
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "3 []", done.stdout + done.stderr
    assert "no meshdbg server reachable at 127.0.0.1:1" in done.stderr


def test_the_command_leaves_nothing_for_the_last_collection_at_exit(tmp_path: Path) -> None:
    """`meshdbg` and `python -m meshdbg` run `cli.run`, which freezes what main() made, so the
    interpreter's final collection skips it (most of a client verb's exit time)."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="meshdbg")
    assert script.value == "meshdbg.debugger.cli:run"
    assert "sys.exit(run())" in (Path(__file__).resolve().parents[2] / "__main__.py").read_text(encoding="utf-8")
    code = ("import gc, sys\nfrom meshdbg.debugger import cli\n"
            "sys.argv = ['meshdbg', 'schedule', '--kind', 'gpipe', '--ranks', '2', '--microbatches', '2', '--json']\n"
            "before = gc.get_freeze_count()\nstatus = cli.run()\n"
            "print(status, before, gc.get_freeze_count() > 0, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.stderr.split() == ["0", "0", "True"], done.stderr


@pytest.mark.parametrize(("argv", "collector_on"), [(["list", "--json"], False), (["watch"], True)])
def test_a_brief_verb_runs_without_the_collector_a_lasting_one_with_it(argv: list[str], collector_on: bool,
                                                                       tmp_path: Path) -> None:
    """Loading gRPC and protobuf set off ~40 collections that found nothing (issue 22): a verb
    that returns in a moment runs with the cyclic collector off; one that lasts (a server, the
    console, `watch`) gets it back once its modules are loaded."""
    code = ("import gc, sys\nfrom meshdbg.debugger import cli\n"
            "collections = []\ngc.callbacks.append(lambda phase, info: collections.append(phase))\n"
            f"sys.argv = ['meshdbg', *{argv!r}]\nbefore = len(collections)\nstatus = cli.run()\n"
            "print(status, gc.isenabled(), len(collections) - before, file=sys.stderr)\n")
    env = dict(os.environ, MESHDBG_ADDR="127.0.0.1:1", MESHDBG_TOKEN="t")  # nothing listens: exit 3
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=30)
    status, enabled, collections = done.stderr.split()[-3:]
    assert (status, enabled) == ("3", str(collector_on)), done.stderr
    assert collector_on or collections == "0", done.stderr


@pytest.mark.parametrize("module", ["grpc", "meshdbg.debugger.verbs.attach"])
def test_ctrl_c_while_the_command_loads_is_one_line(module: str, tmp_path: Path) -> None:
    """Ctrl-C pressed right after Enter lands while gRPC or the verb's module loads: it printed
    a KeyboardInterrupt traceback. Here the interrupt is raised by that import itself."""
    code = ("import sys\n"
            "class Interrupting:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == {module!r}:\n"
            "            raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Interrupting())\n"
            "from meshdbg.debugger.cli import run\n"
            "sys.argv = ['meshdbg', 'attach', '0']\n"
            "sys.exit(run())\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                          env=dict(os.environ, MESHDBG_ADDR="127.0.0.1:1", MESHDBG_TOKEN="t"))
    assert (done.returncode, done.stderr) == (130, "meshdbg: interrupted\n")
