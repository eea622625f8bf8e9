"""An IDE's breakpoint as pdb lines (meshdbg.debugger.dap.breakpoints): the pure translation,
and the lines it makes fed to local pdb on a real program (the oracle for what they do)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import pytest

from e2e import SCRIPTS, line_of
from meshdbg.debugger.dap.breakpoints import IdeBreakpoint, UnusableBreakpoint, hit_test, log_test

LOOP = SCRIPTS / "ide_loop.py"
SQUARE, TOTAL = line_of("ide_loop.py", "square = i * i"), line_of("ide_loop.py", "total += square")


def said(message: str, **scope: object) -> str:
    """What a logpoint's condition prints in a frame whose locals are `scope` (and what it returns)."""
    test = log_test(message)
    assert ";" not in test  # (pdb splits a line at ";;")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert eval(test, {}, scope) is False  # a logpoint never stops
    return printed.getvalue()


@pytest.mark.parametrize(("message", "scope", "expected"), [
    ("plain text", {}, "plain text"),
    ("i={i}", {"i": 3}, "i=3"),
    ("{a}{b}", {"a": 1, "b": "x"}, "1x"),
    ("100% of {n};; done", {"n": 5}, "100% of 5;; done"),  # '%' and ';;' are text, as written
    ("nested { {'k': i}['k'] }", {"i": 7}, "nested 7"),
    ("quote ' and \" and \\ {i}", {"i": 1}, "quote ' and \" and \\ 1"),
    ("empty {} braces", {}, "empty  braces"),
    ("{missing} here", {}, "name 'missing' is not defined"),  # the error in place of the message, as debugpy
])
def test_a_logpoint_prints_its_text_with_each_expression_in_braces_as_str(message: str, scope: dict,
                                                                         expected: str) -> None:
    assert said(message, **scope) == expected + "\n"


def test_a_logpoint_whose_expression_does_not_compile_prints_why_and_never_stops() -> None:
    assert said("x={1 +}").startswith("invalid syntax")  # (compiled once per message, at its first hit)


@pytest.mark.parametrize("message", ["a {b", "a } b", "{{i}"])
def test_unbalanced_braces_are_refused(message: str) -> None:
    with pytest.raises(UnusableBreakpoint, match="unbalanced braces"):
        log_test(message)


@pytest.mark.parametrize(("hit", "stops_at"), [
    ("3", [3]), ("== 3", [3]), (">= 4", [4, 5, 6]), ("> 4", [5, 6]), ("< 3", [1, 2]), ("<= 2", [1, 2]),
    ("%2", [2, 4, 6]), ("% 3", [3, 6]), ("@HIT@ in (2, 5)", [2, 5]),
])
def test_hit_counts_as_debugpy_reads_them(hit: str, stops_at: list[int]) -> None:
    class Counted:
        hits = 0

    test = hit_test(hit, 7).replace("__import__('bdb').Breakpoint.bpbynumber[7]", "counted")
    stops = []
    for count in range(1, 7):
        Counted.hits = count
        if eval(test, {"counted": Counted}):
            stops.append(count)
    assert stops == stops_at


@pytest.mark.parametrize("hit", ["% 0", "often", "> x"])
def test_a_hit_count_not_understood_is_refused(hit: str) -> None:
    with pytest.raises(UnusableBreakpoint):
        hit_test(hit, 1)


def test_a_condition_or_message_pdb_would_split_is_refused() -> None:
    with pytest.raises(UnusableBreakpoint, match="';;'"):
        IdeBreakpoint(condition="a;;b").lines_after_break(1)
    assert IdeBreakpoint().lines_after_break(1) == []


def local_pdb(lines: list[str]) -> str:
    """Local pdb on LOOP fed `lines` then `c` until the program's end: what it printed then."""
    typed = "\n".join([*lines, *["c"] * 60]) + "\n"
    done = subprocess.run([sys.executable, "-m", "pdb", str(LOOP)], input=typed, capture_output=True, text=True,
                          timeout=60, env={"PYTHONBREAKPOINT": "0", "PATH": "/usr/bin:/bin"})
    return done.stdout.split("The program finished")[0]  # (-m pdb's `c` at the end runs it again)


def stops_of(output: str) -> int:
    return output.count(f"ide_loop.py({SQUARE})run()")


def test_the_lines_make_local_pdb_stop_and_print_as_the_ide_asked() -> None:
    """The lines made for breakpoint 1, fed to local pdb: the stops a hit count and a condition
    allow (both must hold), and a logpoint's line for every hit without a stop."""
    both = IdeBreakpoint(condition="i % 2 == 0", hit_condition=">= 31")
    output = local_pdb([f"b {LOOP}:{SQUARE}", *both.lines_after_break(1), "display i"])
    assert stops_of(output) == 5  # i = 30 is the 31st hit: 30, 32, 34, 36, 38

    logpoint = IdeBreakpoint(log_message="i={i} sq={square}", condition="i > 36")
    output = local_pdb([f"b {LOOP}:{TOTAL}", *logpoint.lines_after_break(1)])
    assert re.findall(r"i=\d+ sq=\d+", output) == ["i=37 sq=1369", "i=38 sq=1444", "i=39 sq=1521"]
    assert f"ide_loop.py({TOTAL})run()" not in output and "total=20540" in output

    # A step onto a logpoint's line stops there, as on any line (the step is the user's).
    output = local_pdb([f"b {LOOP}:{TOTAL}", *logpoint.lines_after_break(1), f"b {LOOP}:{SQUARE}, i == 38", "c", "n",
                        "p i", "clear 2"])
    assert f"ide_loop.py({TOTAL})run()" in output and "(Pdb) 38\n" in output
