"""CPython's own pdb tests as cases of the parity harness: an oracle this project did not write.

Lib/test/test_pdb.py of the Python running the tests holds doctests that each define some
functions, one of which stops with `pdb.Pdb(...).set_trace()`, and drive it with
`with PdbTestInput([...lines...]): test_function()`. Each becomes a script: its examples
compiled one by one under doctest's file names (`<doctest test.test_pdb.NAME[i]>`, their
sources put in linecache as doctest does, so `list` shows them), the stop a plain
`breakpoint()`, the `with` block its bare call; and the lines become the lines typed. Local
pdb and meshdbg then run the same script with the same lines (parity.py), so the doctest's
own expected output (which names CPython's test module) is not needed: the two transcripts
are compared with each other.

A doctest whose stop is a pdb of its own with `skip=` keeps it (`own_pdb`): `meshdbg run`'s
bootstrap routes such a pdb's `set_trace()` to a session whose pdb skips the same modules (the
hook alone routes only `breakpoint()`), so those run only under the bootstrap.

Left out: doctests that stop otherwise (`pdb.run`, `pdb.post_mortem`), or have no
`PdbTestInput` block.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

STOP = re.compile(r"pdb\.Pdb\((?:nosigint=True, )?(?:readrc=False)?\)\.set_trace\(\)")
OWN_STOP = re.compile(r"pdb\.Pdb\(skip=\[[^\]]*\](?:, nosigint=True)?(?:, readrc=False)?\)\.set_trace\(\)")
RUNNER = '''import bdb
import builtins
import linecache
import pdb
import sys
import types

# test_pdb's own module for its doctest of skipping a module that calls back
mod = types.ModuleType('module_to_skip')
exec('def foo_pony(callback): x = 1; callback(); return None', mod.__dict__)


def print(*args, **kwargs):
    """The examples' print, silent while the program runs on with no pdb in charge (before its
    first stop, under `continue`): remotely that output is the rank's log, not the session's
    (README, "pdb remotely": the documented differences). In a pdb command, or a step (`n`,
    `until`, `return`), it prints."""
    if _pdb_in_charge():
        builtins.print(*args, **kwargs)


def _pdb_in_charge():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename in (pdb.__file__, bdb.__file__):
            return True  # a command of pdb's runs this
        frame = frame.f_back
    debugger = getattr(sys.gettrace(), "__self__", None)
    return isinstance(debugger, bdb.Bdb) and debugger.stoplineno != -1  # (-1: `continue`)


def run_example(filename, source, mode="single"):
    """One doctest example, compiled and run as doctest runs it, its source where pdb finds it."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, mode), globals())


'''


@dataclass(frozen=True)
class DoctestCase:
    name: str  # the doctest's function in test_pdb
    script: str  # the script's source
    lines: list[str]  # what is typed at pdb's prompts
    own_pdb: bool = False  # it stops in a `pdb.Pdb(skip=...)` of its own, not at a breakpoint()

    def __str__(self) -> str:
        return self.name


def pdb_doctest_source() -> str | None:
    """Lib/test/test_pdb.py of this Python, or None when it was installed without its tests."""
    spec = importlib.util.find_spec("test.test_pdb")
    return Path(spec.origin).read_text() if spec is not None and spec.origin else None


def doctest_cases(source: str) -> list[DoctestCase]:
    """Every doctest of `source` (test_pdb's) that the harness can run, as a script and its lines."""
    cases = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_pdb_"):
            case = _case(node.name, ast.get_docstring(node, clean=True) or "")
            if case is not None:
                cases.append(case)
    return cases


def _case(name: str, docstring: str) -> DoctestCase | None:
    examples = doctest.DocTestParser().get_examples(docstring)
    script, lines = [RUNNER], []
    for index, example in enumerate(examples):
        if example.source.strip() == "reset_Breakpoint()":
            continue  # the doctests share one process's breakpoints; a script starts with none
        code, mode = STOP.sub("breakpoint()", example.source), "single"
        block = _input_block(code)
        if block is not None:  # its body, maybe several statements, as the `with` ran them
            (typed, code), mode = block, "exec"
            lines.extend(typed)
        if re.search(r"\bpdb\.(?!Pdb\(\)\.set_trace)\w+\(|PdbTestInput", OWN_STOP.sub("", code)):
            return None  # another way into pdb than a plain stop
        script.append(f"run_example({f'<doctest test.test_pdb.{name}[{index}]>'!r}, {code!r}, {mode!r})\n")
    source = "".join(script)
    own_pdb = OWN_STOP.search(source) is not None
    if not lines or ("breakpoint()" not in source and not own_pdb):
        return None
    return DoctestCase(name, source, lines, own_pdb)


def _input_block(code: str) -> tuple[list[str], str] | None:
    """For `with PdbTestInput([...]): BODY`: the lines and BODY's source; else None."""
    tree = ast.parse(code)
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.With):
        return None
    block = tree.body[0]
    call = block.items[0].context_expr
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "PdbTestInput"):
        return None
    source_lines = code.splitlines(True)
    body = "".join(source_lines[block.body[0].lineno - 1:block.body[-1].end_lineno])
    return list(ast.literal_eval(call.args[0])), textwrap.dedent(body)
