"""A `with` block that changes something of the whole process for as long as any thread is
inside one: the first block in takes it, the last one out gives it back, under one lock.
Subclasses say what is taken (meshdbg.worker.headroom: the recursion limit raised;
meshdbg.worker.stdio_numbers: closed standard descriptors held on /dev/null)."""

from __future__ import annotations

import threading
from typing import Any, ClassVar


class SharedHold:
    """`with Sub():` inside, `Sub.take()` has run and `Sub.give_back()` has not: each subclass
    is one hold of the process (its own lock and count), whatever instance enters it;
    re-entrant, and shared between threads."""

    __slots__ = ()
    _lock: ClassVar[threading.Lock]
    _holders: ClassVar[int]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._lock, cls._holders = threading.Lock(), 0

    def __enter__(self) -> None:
        held = type(self)
        with held._lock:
            if not held._holders:
                held.take()
            held._holders += 1

    def __exit__(self, *_: object) -> None:
        held = type(self)
        with held._lock:
            held._holders -= 1
            if not held._holders:
                held.give_back()

    @classmethod
    def take(cls) -> None:
        """What the first block in does (the lock held)."""
        raise NotImplementedError

    @classmethod
    def give_back(cls) -> None:
        """What the last block out does (the lock held)."""
        raise NotImplementedError
