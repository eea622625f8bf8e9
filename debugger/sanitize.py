"""Identity text made safe for a terminal before anything shows it.

A worker names itself (MESHDBG_NAME, its hostname, thread names, context labels), so those
strings are untrusted: an escape sequence in a name would repaint or retitle the terminal of
whoever runs `meshdbg list`, and a bidi override would make it lie about what it shows. The
server rewrites control and bidi-control characters as visible `\\x1b`-style escapes once, when
a hello arrives, so every listing, watch event and console line shows the same safe text.
"""

from __future__ import annotations

import re

from meshdbg.wire.proto import debugger_pb2 as pb

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with every control or bidi-control character shown as an escape (`\\x1b`)."""
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
