"""Colour for pdb output: source lines of `l`, `ll` and the current line `->` through pygments.

pdb prints listings as `  12 B->\tcode` and the current line as `-> code` under a
`> file(12)func()` location line. Only the code part is lexed as Python; everything else is
left as pdb wrote it, so a listing reads the same with colour off (`NO_COLOR`, dumb terminals).
"""

from __future__ import annotations

import re
from typing import Iterator

from prompt_toolkit.formatted_text import PygmentsTokens, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.styles import Style, merge_styles, style_from_pygments_cls
from pygments import lex
from pygments.lexers.python import PythonLexer
from pygments.styles import get_style_by_name

from meshdbg.debugger.format import PDB_ERROR_PREFIX

PYGMENTS_STYLE = "monokai"

# `  12 B->\tcode`: line number, breakpoint mark, current/exception marker, tab, code.
_LISTING = re.compile(r"^(?P<gutter>\s*\d+\s+B?(?:->|>>)?\t)(?P<code>.*)$")
# `-> code` under a location line (also indented, inside grouped cast output).
_CURRENT = re.compile(r"^(?P<gutter>\s*-> )(?P<code>.*)$")
_LOCATION = re.compile(r"^\s*> .*\(\d+\).*\(\)")
_ERROR = re.compile(r"^\s*" + re.escape(PDB_ERROR_PREFIX))

_LEXER = PythonLexer(stripnl=False, ensurenl=False)

STYLE = merge_styles([
    style_from_pygments_cls(get_style_by_name(PYGMENTS_STYLE)),
    Style.from_dict({
        "gutter": "#888888",
        "current": "bold #ffaf00",
        "location": "#5fafff",
        "error": "#ff5f5f",
        "announce": "#87d7af",
        "warning": "#ffaf5f",
        "bottom-toolbar": "noreverse bg:#303030 #d0d0d0",
    }),
])


def _source_split(line: str) -> tuple[str, str] | None:
    """(gutter, code) for a source line of pdb's output, None for any other line."""
    for pattern in (_LISTING, _CURRENT):
        match = pattern.match(line)
        if match:
            return match.group("gutter"), match.group("code")
    return None


def _lexed_lines(codes: list[str]) -> list[StyleAndTextTuples]:
    """Consecutive source lines lexed as one block (so a docstring stays a string), split back."""
    lines: list[StyleAndTextTuples] = [[]]
    for style, text, *_ in to_formatted_text(PygmentsTokens(list(lex("\n".join(codes), _LEXER)))):
        for index, piece in enumerate(text.split("\n")):
            if index:
                lines.append([])
            if piece:
                lines[-1].append((style, piece))
    return lines


def _plain_style(line: str) -> str:
    if _LOCATION.match(line):
        return "class:location"
    return "class:error" if _ERROR.match(line) else ""


def pdb_fragments(text: str, color: bool) -> StyleAndTextTuples:
    """pdb's output with its source lines highlighted when `color` is on; no trailing newline."""
    body = text.rstrip("\n")
    if not color:
        return [("", body)]
    lines = body.split("\n")
    fragments: StyleAndTextTuples = []
    index = 0
    while index < len(lines):
        run: list[tuple[str, str]] = []
        while index + len(run) < len(lines) and (split := _source_split(lines[index + len(run)])):
            run.append(split)
        if run:
            for (gutter, _), code in zip(run, _lexed_lines([code for _, code in run])):
                style = "class:current" if "->" in gutter else "class:gutter"
                fragments.extend([("", "\n"), (style, gutter), *code])
            index += len(run)
        else:
            fragments.extend([("", "\n"), (_plain_style(lines[index]), lines[index])])
            index += 1
    return fragments[1:]


def fragment_chunks(fragments: StyleAndTextTuples, size: int) -> Iterator[tuple[int, StyleAndTextTuples]]:
    """The fragments in pieces of about `size` characters (a long fragment split, styles kept),
    each with how many characters came before it: long output drawn a piece at a time."""
    chunk: StyleAndTextTuples = []
    drawn = length = 0
    for style, text, *_ in fragments:
        for start in range(0, len(text), size):
            piece = text[start:start + size]
            chunk.append((style, piece))
            length += len(piece)
            if length >= size:
                yield drawn, chunk
                drawn, chunk, length = drawn + length, [], 0
    if chunk:
        yield drawn, chunk
