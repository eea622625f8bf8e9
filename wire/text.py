"""Text that can cross the wire: protobuf strings must be valid UTF-8, Python strings need not be.

A lone surrogate (`'\\udcff'`, what surrogateescape makes of an undecodable byte) would make
protobuf refuse the whole message, and so end the session of the rank that printed it. Both
the worker (pdb's output) and the clients (typed lines, command-line arguments) pass their
text through `wire_text`, which keeps every valid character and spells the others as escapes.
"""

from __future__ import annotations


def wire_text(text: str) -> str:
    """`text` unchanged when it is valid UTF-8, else with each lone surrogate as `\\udcff`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
