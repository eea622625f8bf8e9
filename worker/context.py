"""Labels that describe what a worker thread is doing, shown with any session it opens.

The pipeline runtime sets `stage`, `microbatch` and `action` around each action, so a
breakpoint inside a stage's forward shows up in `meshdbg list` with that context. Context
variables keep the labels per thread (and per asyncio task).
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator, Mapping

_labels: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar("meshdbg_labels", default={})


_EXCEPTION_LABELS = "__meshdbg_context__"


@contextlib.contextmanager
def debug_context(**labels: object) -> Iterator[None]:
    """Add `labels` to every session opened inside the block (nested blocks add up).

    An exception leaving the block remembers the labels in force where it was raised, so a
    post-mortem session opened after the block has unwound still shows them (`context_of`).
    """
    merged = {**_labels.get(), **{key: str(value) for key, value in labels.items()}}
    token = _labels.set(merged)
    try:
        yield
    except BaseException as exc:
        if not hasattr(exc, _EXCEPTION_LABELS):
            setattr(exc, _EXCEPTION_LABELS, merged)
        raise
    finally:
        _labels.reset(token)


def context_of(exc: BaseException | None) -> dict[str, str]:
    """The labels in force where `exc` (or the error it was raised from) was raised inside a
    debug_context block; empty if none."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if hasattr(exc, _EXCEPTION_LABELS):
            return dict(getattr(exc, _EXCEPTION_LABELS))
        exc = exc.__cause__ or exc.__context__
    return {}


def current_context() -> dict[str, str]:
    """The labels in force in the calling thread."""
    return dict(_labels.get())
