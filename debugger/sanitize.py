"""Identity and frame text made safe for a terminal before anything shows it.

A worker names itself (MESHDBG_NAME, its hostname, thread names, context labels) and its frames
(any filename given to compile(), any code name), so those strings are untrusted: an escape
sequence would repaint or retitle the terminal of whoever runs `meshdbg list`, and a bidi
override would make it lie about what it shows. `printable` is the one function that rewrites
control and bidi-control characters as visible `\\x1b`-style escapes: the server applies it to
each hello (so its own stderr and every client see the same names), and the views every client
and announcement is built from (meshdbg.debugger.views) apply it to identity and frame text.
It changes nothing twice: its output holds no character it rewrites.
"""

from __future__ import annotations

import re

from meshdbg.wire.proto import debugger_pb2 as pb

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control or bidi-control character shown as an escape (`\\x1b`)."""
    if text.isascii() and text.isprintable():  # the usual name or path: two C calls, no regex (listings of 10,000)
        return text
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def sanitize_identity(identity: pb.Identity) -> None:
    """Make every text field of `identity` printable, in place."""
    identity.name, identity.hostname, identity.thread_name = (
        printable(identity.name), printable(identity.hostname), printable(identity.thread_name))
    for coord in identity.coords:
        coord.dim = printable(coord.dim)
    context = {printable(key): printable(value) for key, value in identity.context.items()}
    identity.context.clear()
    identity.context.update(context)
