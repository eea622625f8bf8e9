"""Bad input from a user or an environment: a one-line error, never a traceback or a crash.

The fuzz tests (test_fuzz.py) cover the parsers; these drive the real CLI and a real worker.
"""

from __future__ import annotations

import subprocess
import sys

from e2e import SCRIPTS, Server

HUGE = "1" * 4301  # past Python's 4,300-digit limit for int()


def test_huge_numbers_are_usage_errors_and_nothing_is_lost(server: Server) -> None:
    server.worker("hold.py", 0)
    server.wait_sessions(1)
    for args in (("cast", HUGE, "p 1"), ("cast", f"ranks(hosts={HUGE})", "p 1"), ("continue", HUGE),
                 ("attach", "--plain", HUGE), ("attach", "--plain", f"#{HUGE}"), ("cast", f"1-{HUGE}", "p 1"),
                 ("continue", f"1-{HUGE}"), ("interrupt", f"1-{HUGE}"), ("stacks", f"1-{HUGE}"),
                 ("compare", f"1-{HUGE}", "x"), ("compare", "--timeout", "nan", "all", "x")):
        result = server.cli(*args, input="")
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr and result.stderr.startswith(("meshdbg: ", "usage: meshdbg"))
    assert len(server.sessions()) == 1


def test_bad_identity_variables_never_raise_into_the_program(server: Server) -> None:
    for variables in ({"MESHDBG_RANK": "2147483648"}, {"MESHDBG_RANK": "0", "MESHDBG_COORDS": "a=2147483648"},
                      {"MESHDBG_RANK": "0", "MESHDBG_COORDS": "hosts=²"}, {"MESHDBG_RANK": HUGE}):
        env = dict(server.env, PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook", **variables)
        result = subprocess.run([sys.executable, "-c", "breakpoint(); print('ran on')"], env=env, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=20, cwd=SCRIPTS)
        assert result.returncode == 0 and result.stdout == "ran on\n", (variables, result.stderr)
        assert "Traceback" not in result.stderr and "meshdbg: " in result.stderr and "continuing" in result.stderr
