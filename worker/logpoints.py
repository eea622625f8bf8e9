"""Logpoints: a breakpoint whose condition prints a message in the rank's output and never stops.

An IDE's logpoint (DAP's `logMessage`, `{expr}` parts evaluated where the line runs) is made a
pdb breakpoint with the condition `say(MESSAGE)` (meshdbg.debugger.dap.breakpoints): bdb
evaluates it in the breakpoint's frame each time the line runs, it prints, and being false it
never stops the rank, nor turns a step onto the line into a continue (as a `commands` block
ending in `cont` would). An expression that fails prints its error instead of the message, as
debugpy does; the program goes on.
"""

from __future__ import annotations

import functools
import sys
from types import CodeType

from meshdbg.worker.values import compiled_expression


def parts(message: str) -> list[tuple[str, str]]:
    """`message` as (text, expression) pairs, in order (the expression of the last may be "");
    braces nest inside an expression, as in debugpy. ValueError on unbalanced braces."""
    found: list[tuple[str, str]] = []
    text: list[str] = []
    index = 0
    while index < len(message):
        char = message[index]
        if char == "{":
            end = _closing_brace(message, index)
            found.append(("".join(text), message[index + 1:end].strip()))
            text = []
            index = end + 1
        elif char == "}":
            raise ValueError(f"unbalanced braces in the log message {message!r}")
        else:
            text.append(char)
            index += 1
    if text or not found:
        found.append(("".join(text), ""))
    return found


_DEPTH = {"{": 1, "}": -1}


def _closing_brace(message: str, opening: int) -> int:
    depth = 0
    for index in range(opening, len(message)):
        depth += _DEPTH.get(message[index], 0)
        if depth == 0:
            return index
    raise ValueError(f"unbalanced braces in the log message {message!r}")


@functools.lru_cache(maxsize=256)
def _pieces(message: str) -> tuple[tuple[str, CodeType | None], ...]:
    """`parts(message)` with each expression compiled: once per message, not at every hit of
    a logpoint in a loop. ValueError or SyntaxError as they come."""
    return tuple((text, compiled_expression(expression) if expression else None) for text, expression in parts(message))


def say(message: str) -> bool:
    """Print `message` with each `{expr}` as `str` of its value in the caller's frame (the
    breakpoint's, whose condition calls this); False: the breakpoint does not stop."""
    frame = sys._getframe(1)
    try:
        line = "".join(text + (str(eval(code, frame.f_globals, frame.f_locals)) if code is not None else "")
                       for text, code in _pieces(message))
    except Exception as exc:  # the program's names, its errors: shown in the line, never raised into bdb
        line = str(exc)
    finally:
        del frame
    print(line, flush=True)
    return False
