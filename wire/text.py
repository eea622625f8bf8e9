"""Text that can cross the wire: protobuf strings must be valid UTF-8, Python strings need not be.

A lone surrogate (`'\\udcff'`, what surrogateescape makes of an undecodable byte) would make
protobuf refuse the whole message, and so end the session of the rank that printed it. Both
the worker (pdb's output) and the clients (typed lines, command-line arguments) pass their
text through `wire_text`, which keeps every valid character and spells the others as escapes.
"""

from __future__ import annotations


def wire_text(text: str) -> str:
    """`text` unchanged when it is valid UTF-8, else with each lone surrogate as `\\udcff`."""
    if text.isascii():  # (a flag of the string: no encoding of every `p x`'s prompt and line)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def as_written_by(text: str, errors: str) -> str:
    """`text` as a terminal shows it once a UTF-8 stream with error handler `errors` wrote it
    (a program's stdout): with surrogateescape, a lone surrogate is the byte it stands for,
    which the terminal decodes (an undecodable byte shows as U+FFFD, escaped UTF-8 as its
    character). Unchanged where the stream would raise (strict): `wire_text` escapes it."""
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", errors).decode("utf-8", "replace")
    except (UnicodeEncodeError, LookupError):
        return text


MAX_REPLY_BYTES = 3 * 1024 * 1024  # under gRPC's 4 MB message limit, with room for the rest


def fit_reply(text: str, limit: int = MAX_REPLY_BYTES) -> str:
    """`text` as wire text, cut to `limit` UTF-8 bytes (with a note saying so) when longer:
    a reply over gRPC's message limit would end the session instead of showing anything."""
    text = wire_text(text)
    size = len(text.encode("utf-8"))
    if size <= limit:
        return text
    kept = text.encode("utf-8")[:limit].decode("utf-8", "ignore")
    return kept + f"\n*** meshdbg: output cut at {limit // (1024 * 1024)} MiB of {size / (1024 * 1024):.1f} MiB\n"
