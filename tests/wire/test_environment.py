"""The environment contract (meshdbg.wire.environment): every `MESHDBG_*` variable declared
once, read only through it, documented in the README by it, and a bad value a one-line error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import SCRIPTS, Server
from meshdbg.wire import environment
from meshdbg.wire.environment import COORDS, LOG, PAUSE_TIMEOUT, POST_MORTEM, RANK, READRC, RECONNECT_S, VARIABLES
from meshdbg.wire.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FOLDERS = ("wire", "worker", "debugger", "host")
DECLARED = {variable.name for variable in VARIABLES}
TABLE = re.compile(r"<!-- environment table: [^\n]* -->\n(.*?)<!-- end of the environment table -->", re.S)


def _package_sources() -> dict[Path, str]:
    return {path: path.read_text() for folder in PACKAGE_FOLDERS for path in (ROOT / folder).rglob("*.py")
            if "proto" not in path.relative_to(ROOT).parts}


def test_the_readme_table_is_the_generated_one() -> None:
    found = TABLE.search((ROOT / "README.md").read_text())
    assert found, "README.md has no environment table between its markers"
    generated = subprocess.run([sys.executable, "-m", "meshdbg.wire.environment", "--markdown"], capture_output=True,
                               text=True, timeout=30, check=True).stdout
    assert found.group(1) == generated == environment.markdown(), \
        "the README's table is stale: paste `python -m meshdbg.wire.environment --markdown` between its markers"


def test_every_variable_named_anywhere_is_declared() -> None:
    texts = [*_package_sources().values(), (ROOT / "README.md").read_text()]
    named = {name for text in texts for name in re.findall(r"\bMESHDBG_[A-Z_]*[A-Z]\b", text)}
    assert named - DECLARED == set()


def test_only_the_contract_reads_the_environment_for_meshdbg() -> None:
    readers = [f"{path.relative_to(ROOT)}:{number}" for path, text in _package_sources().items()
               if path.name != "environment.py"
               for number, line in enumerate(text.splitlines(), 1)
               if re.search(r"(environ|getenv)\b.*MESHDBG_", line)]
    assert readers == []


def test_each_variable_is_documented_once_with_a_meaning() -> None:
    assert len(DECLARED) == len(VARIABLES)
    assert all(v.name.startswith("MESHDBG_") and v.kind and v.shown_default and v.meaning for v in VARIABLES)


@pytest.mark.parametrize(("variable", "text", "value"), [
    (RANK, " 7 ", 7), (COORDS, "pp=1,dp=0", {"pp": 1, "dp": 0}), (RECONNECT_S, "2.5", 2.5), (POST_MORTEM, "0", False),
    (READRC, "1", True), (LOG, "DEBUG", "debug"), (PAUSE_TIMEOUT, "", 3600.0), (RANK, "", None)])
def test_values_are_typed(variable: environment.Variable, text: str, value: object) -> None:
    assert variable.get({variable.name: text}) == value


@pytest.mark.parametrize(("variable", "text"), [
    (RANK, "two"), (RANK, "1" * 5000), (COORDS, "hosts=x"), (RECONNECT_S, "-1"), (RECONNECT_S, "nan"),
    (PAUSE_TIMEOUT, "1e9"), (POST_MORTEM, "maybe"), (READRC, "yes"), (LOG, "loud")])
def test_a_bad_value_is_one_line_naming_the_variable(variable: environment.Variable, text: str) -> None:
    with pytest.raises(UsageError) as caught:
        variable.get({variable.name: text})
    message = str(caught.value)
    assert message.startswith(f"{variable.name}=") and "expected" in message and "\n" not in message
    assert len(message) < 200


@pytest.mark.parametrize(("name", "text"), [("MESHDBG_PAUSE_TIMEOUT", "soon"), ("MESHDBG_RECONNECT_S", "-3"),
                                             ("MESHDBG_LOG", "loud")])
def test_a_server_refuses_a_bad_setting_in_one_line(server: Server, name: str, text: str) -> None:
    env = dict(server.env, **{name: text})
    env.pop("MESHDBG_CONNECTION_FILE")
    result = subprocess.run([sys.executable, "-m", "meshdbg", "serve", "--port", "0"], env=env, capture_output=True,
                            text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"meshdbg: {name}={text!r}: expected ") and result.stderr.count("\n") == 1


def test_a_worker_says_a_bad_setting_once_and_runs_on_with_the_default(server: Server) -> None:
    worker = server.worker("hold.py", 0, env=dict(server.env, MESHDBG_RECONNECT_S="soon", MESHDBG_READRC="yes"))
    server.wait_sessions(1)
    assert server.cli("continue").returncode == 0
    out, err = worker.communicate(timeout=20)
    assert out == "rank 0 continued\n"
    assert err.count("meshdbg: MESHDBG_RECONNECT_S='soon': expected a number of seconds") == 1, err
    assert "meshdbg: MESHDBG_READRC='yes': expected 0 or 1; using 1\n" in err and "Traceback" not in err


def test_bad_identity_is_said_by_the_hook_and_the_program_runs_on(server: Server) -> None:
    env = dict(server.env, MESHDBG_RANK="0", MESHDBG_COORDS="hosts", PYTHONBREAKPOINT="meshdbg.set_trace")
    result = subprocess.run([sys.executable, "-c", "breakpoint(); print('ran on')"], env=env, cwd=SCRIPTS,
                            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert result.stdout == "ran on\n" and "Traceback" not in result.stderr
    assert "meshdbg: MESHDBG_COORDS='hosts': expected dim=index pairs" in result.stderr
