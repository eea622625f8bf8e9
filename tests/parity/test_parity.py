"""The pdb-parity suite: each script, the same pdb lines, local pdb and meshdbg print the same.

Local pdb on the Python running the tests is the oracle (`python SCRIPT < lines`); .ci/run
runs this suite on every CPython 3.11+ the machine has. The differences that remain are the
documented ones (README, "pdb remotely"), checked in test_documented_differences.py.
"""

from __future__ import annotations

import sys

import pytest

from e2e import Server
from parity import SCRIPTS, local_transcript, remote_transcript


def line(script: str, text: str) -> int:
    """The number of the first line of `script` containing `text`."""
    return next(n for n, source in enumerate((SCRIPTS / script).read_text().splitlines(), 1) if text in source)


CASES: dict[str, list[str]] = {
    "step_basic.py": ["s", "s", "p a, b", "n", "p total", "r", "n", "p y", "c"],
    "step_into.py": ["s", "s", "s", "where", "r", "n", "n", "p result", "c"],
    "return_cmd.py": ["s", "r", "retval", "n", "c"],
    "until_loop.py": ["n", "n", "n", "until", "until", "p total", "c"],
    "jump.py": ["n", f"j {line('jump.py', 'c = 3')}", "n", "p 'b' in dir()", "c"],
    "breakpoints.py": [f"b {line('breakpoints.py', 'square = n')}", "b", "c", "p n", "c", "p n", "cl 1", "c"],
    "breakpoints.py#clear_all_asks": [f"b {line('breakpoints.py', 'square = n')}", "cl", "n", "b", "c", "cl", "yes",
                                      "b", "c"],
    "condition.py": [f"b {line('condition.py', 'half =')}, n == 3", "c", "p n", "condition 1", "c", "p n", "cl 1", "c"],
    "tbreak.py": [f"tbreak {line('tbreak.py', 'return n + 1')}", "c", "p n", "b", "c"],
    "disable_enable.py": [f"b {line('disable_enable.py', 'return n - 1')}", "disable 1", "b", "enable 1", "c", "p n",
                          "cl 1", "c"],
    "ignore.py": [f"b {line('ignore.py', 'return n * 3')}", "ignore 1 2", "c", "p n", "cl 1", "c"],
    "commands_silent.py": ["b 3", "commands 1", "silent", "p 'quiet', n", "end", "c", "cl 1", "c"],
    "commands_block.py": [f"b {line('commands_block.py', 'seen = n')}", "commands 1", "p 'visiting', n", "end", "c",
                          "p n", "c", "cl 1", "c"],
    "display.py": ["display counter", "n", "n", "n", "display", "undisplay counter", "n", "c"],
    "header.py": ["p x", "n", "n", "p y", "c", "c"],  # (3.13 stops on the second breakpoint() line again at `c`)
    "header.py#across_c": ["c", "p y", "c"],
    "where_up_down.py": ["where", "up", "p __name__", "up", "down", "down", "down", "bt", "c"],
    "list_cmds.py": ["l", "l", "ll", "l 2, 4", "longlist", "c"],
    "args_retval.py": ["args", "a", "n", "retval", "rv", "c"],
    "print_cmds.py": ["p text", "pp data", "p len(data)", "whatis text", "p $missing", "p undefined_name", "c"],
    "exec_stmt.py": ["!value = 99", "p value", "value", "!import math", "p math.sqrt(16)", "n", "p after", "c"],
    "alias.py": ["alias show p items", "show", "alias", "n", "show", "unalias show", "show", "c"],
    "exception_step.py": ["s", "s", "s", "s", "s", "n", "n", "p caught", "c"],
    "generator.py": ["s", "s", "s", "n", "n", "r", "c"],
    "coroutine.py": ["n", "s", "n", "n", "c"],
    "recursion.py": ["where", "up", "p n", "up", "p n", "down", "c"],
    "closure.py": ["s", "s", "p k", "p x", "r", "c"],
    "methods.py": ["s", "s", "p self.count", "n", "n", "p by", "c"],
    "unicode.py": ["p word", "p emoji", "pp [word, emoji]", "n", "p joined", "c"],
    "big_output.py": ["p n if 'n' in dir() else len(rows)", "pp rows[:50]", "p '\\n'.join(rows)", "c"],
    "help_all.py": ["help", "help n", "help break", "help commands", "help interact", "help debug", "help whatis",
                    "help exec", "c"],
    "debug_recursive.py": ["debug helper(5)", "s", "n", "p w if 'w' in dir() else None", "c", "p r if 'r' in dir() else 0",
                           "c"],
    "thread_body.py": ["p local_value", "n", "p doubled", "c"],
    "source_whatis.py": ["source documented", "whatis documented", "p documented.__doc__", "c"],
    "breakpoint_in_command.py": ["p f()", "n", "p x", "c"],
    "deleted_cwd.py": ["p w", "n", "p w", "!import os; os.path.exists('.')", "c"],
    "rebreak_loop.py": ["n", "n", "n", "n", "p i", "n", "n", "p i", "c", "p i", "c"],
    # assignments stick; what pdb prints as a stop begins (display changes, commands blocks)
    "assign_locals.py": ["!x = 99", "p x", "n", "p x", "p y", "c"],
    "display_change.py": ["display x", "!x = 7", "n", "n", "c"],
    "display.py#across_c": [f"b {line('display.py', 'counter += i')}", "display counter", "c", "c", "c", "cl 1", "c"],
    "commands_block.py#function": ["b visit", "commands", "p ('CMDS', n)", "end", "c", "c", "display n", "c", "p n",
                                   "s", "r", "cl 1", "c"],
    # stepping across awaits, task switches, async for/with, asyncio.run in threads
    "async_step.py": ["n", "n", "n", "n", "c"],
    "async_tasks.py": ["n"] * 11 + ["c"],
    "async_handoff.py": ["n"] * 8 + ["c"] * 4,
    "async_iter.py": ["n", "n", "s", "n", "n", "n", "n", "s", "n", "n", "n", "n", "n", "n", "n", "n", "n", "c"],
    "async_nested.py": ["n", "n", "p doubled", "c", "p n", "n", "n", "c"],
    # one expression's text again and again: meshdbg compiles it once (PdbWrapper._getval), and
    # it must show each time what local pdb shows: new values, other frames, the same errors
    "print_cmds.py#same_expression_again": ["p text", "p text", "!text = 'changed'", "p text", "p text +", "p text +",
                                            "p 1/0", "p 1/0", "pp text", "p text", "c"],
    "recursion.py#same_expression_in_each_frame": ["p n", "up", "p n", "up", "p n", "down", "p n", "c"],
    # pdb's and Python's own documentation examples
    "docs_double.py": ["p x", "continue"],
    "docs_display.py": ["display lst", "n", "n", "c"],
    "docs_display.py#copy": ["display lst[:]", "n", "n", "c"],
    "docs_statements.py": ["! n=42", "global list_options; list_options = ['-l']", "p n, list_options", "n", "n",
                           "p options", "c"],
    "docs_generator.py": ["n", "s", "s", "s", "n", "n", "s", "n", "r", "n", "c"],
    "docs_asyncio_gather.py": ["n", "n", "n", "n", "n", "n", "n", "c", "n", "n", "c"],
    # stepped from item to item in one session: what a thread prints while no session is open is
    # the rank's log remotely (README: documented differences)
    # (3.13 stops on the breakpoint() line itself, and again once stepped onto it: one more `n`)
    "docs_queue_thread.py": (["p item", *["n"] * 6, "p item", *["n"] * 7, "p item", "n", "c"] if sys.version_info >= (3, 13)
                             else ["p item", *["n"] * 6, "p item", *["n"] * 6, "p item", "c"]),
}


def script_of(case: str) -> str:
    """The script a case runs (`display.py#across_c` runs display.py)."""
    return case.partition("#")[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_meshdbg_prints_what_local_pdb_prints(server: Server, case: str) -> None:
    lines = CASES[case]
    expected = local_transcript(script_of(case), lines)
    got, _ = remote_transcript(server, script_of(case), lines)
    assert got == expected


@pytest.mark.parametrize("errors", ["surrogateescape", "replace"])
def test_text_that_is_not_utf8_shows_as_the_programs_stdout_would_write_it(server: Server, errors: str) -> None:
    """Where the worker's stdout writes such text (C locale's surrogateescape, or any handler
    that does not raise), the session shows what a terminal shows of those bytes: no difference."""
    env = {"PYTHONIOENCODING": f"utf-8:{errors}"}
    lines = ["!print(bad)", "!print('caf\\udcc3\\udca9')", "c"]
    local = local_transcript("surrogates.py", lines, env=env)
    remote, _ = remote_transcript(server, "surrogates.py", lines, env=env)
    assert remote == local
    assert ("\ufffd\n" if errors == "surrogateescape" else "?\n") in remote
