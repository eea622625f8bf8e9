"""An IDE's breakpoint as the pdb lines that make it: condition, hit count, logpoint.

Everything is pdb's own, so a console on the same rank sees and may change what the IDE set
(`b` lists it): `b FILE:LINE` (or `b FUNCTION`) makes the breakpoint, whose number the lines
after it name.

- A condition is pdb's (`condition N EXPR`).
- A hit count (`hitCondition`, as debugpy reads it: `5` or `== 5` stops at the fifth hit
  only, `>= 5`, `> 5`, `< 5`, `<= 5`, `% 5` every fifth; any other text is an expression in
  which `@HIT@` stands for the count) becomes part of the condition, a test of the count pdb
  keeps for the breakpoint (`bdb.Breakpoint.hits`: every time the line is reached while the
  breakpoint is enabled). With a condition too, the rank stops when both hold (debugpy stops
  when either does).
- A logpoint (`logMessage`, `{expr}` parts evaluated in the frame) is a condition too, one
  that prints the message in the rank's output and is false (meshdbg.worker.logpoints): it
  never stops the rank, and a step onto its line stops there as on any other line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from meshdbg.worker import logpoints

_HIT_COUNT = "__import__('bdb').Breakpoint.bpbynumber[{number}].hits"
_COMPARED = re.compile(r"^(==|>=|<=|>|<)\s*(\d+)$")
_EVERY = re.compile(r"^%\s*(\d+)$")
_HIT = "@HIT@"


class UnusableBreakpoint(ValueError):
    """The IDE's breakpoint cannot be made in pdb (said to the IDE as why it is not verified)."""


@dataclass(frozen=True)
class IdeBreakpoint:
    """What the IDE asked of one breakpoint (DAP's SourceBreakpoint or FunctionBreakpoint, less
    where it is)."""

    condition: str = ""
    hit_condition: str = ""
    log_message: str = ""

    @classmethod
    def from_dap(cls, fields: dict[str, Any]) -> "IdeBreakpoint":
        return cls(str(fields.get("condition") or "").strip(), str(fields.get("hitCondition") or "").strip(),
                   str(fields.get("logMessage") or ""))

    def lines_after_break(self, number: int) -> list[str]:
        """The pdb lines that make breakpoint `number` (just made by pdb's `b`) this one:
        its condition. UnusableBreakpoint if it cannot be."""
        tests = [f"({self.condition})"] if self.condition else []
        if self.hit_condition:
            tests.append(hit_test(self.hit_condition, number))
        if self.log_message:
            tests.append(log_test(self.log_message))
        line = f"condition {number} {' and '.join(tests)}"
        if ";;" in line or "\n" in line or "\r" in line:  # pdb would split the line there
            raise UnusableBreakpoint("a condition or log message with ';;' or a line break cannot be given to pdb")
        return [line] if tests else []


def hit_test(hit_condition: str, number: int) -> str:
    """A Python test of breakpoint `number`'s hit count that says whether to stop, from an
    IDE's hit condition (debugpy's forms)."""
    count = _HIT_COUNT.format(number=number)
    text = hit_condition.strip()
    if text.isdigit():
        return f"{count} == {int(text)}"
    every = _EVERY.match(text)
    if every:
        if int(every.group(1)) == 0:
            raise UnusableBreakpoint("hit count '% 0' divides by zero")
        return f"{count} % {int(every.group(1))} == 0"
    compared = _COMPARED.match(text)
    if compared:
        return f"{count} {compared.group(1)} {int(compared.group(2))}"
    if _HIT in text:
        return f"({text.replace(_HIT, count)})"
    raise UnusableBreakpoint(f"hit count {text!r} is not understood: use N, == N, >= N, > N, <= N, < N or % N")


def log_test(message: str) -> str:
    """The condition of a logpoint: it prints `message` where the line runs, and is false."""
    try:
        logpoints.parts(message)
    except ValueError as exc:
        raise UnusableBreakpoint(str(exc)) from None
    return f"__import__('meshdbg.worker.logpoints', fromlist=['say']).say({_literal(message)})"


def _literal(text: str) -> str:
    """`text` as a Python string literal that holds no ';' (pdb splits a line at ';;')."""
    return repr(text).replace(";", "\\x3b")
