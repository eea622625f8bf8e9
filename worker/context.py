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


@contextlib.contextmanager
def debug_context(**labels: object) -> Iterator[None]:
    """Add `labels` to every session opened inside the block (nested blocks add up)."""
    token = _labels.set({**_labels.get(), **{key: str(value) for key, value in labels.items()}})
    try:
        yield
    finally:
        _labels.reset(token)


def current_context() -> dict[str, str]:
    """The labels in force in the calling thread."""
    return dict(_labels.get())
