"""Building millions of actions cheaply: a C-speed ``Action`` constructor and a GC pause.

A large schedule (p = 64, v = 4, m = 1024 lowers to 1.57 M actions) spends most of its
time creating ``Action`` tuples, and two costs dominate that are not the tuples' own:

* ``Action(stage, type, microbatch)`` runs the ``__new__`` that ``NamedTuple`` writes in
  Python. ``new_action((stage, type, microbatch))`` calls ``tuple.__new__`` directly and
  makes the identical object (same class, same fields) in C, in half the time. It does
  not check the arity: callers pass triples they built themselves.
* Every ``Action`` is tracked by the cyclic garbage collector (it holds an ``ActionType``
  member, a tracked object), so a bulk build triggers a collection every 700 new
  tuples, and full collections that walk every live action again as the heap grows:
  about a third of the run time. ``paused_gc`` suspends the collector while a
  generator, ``lower`` or ``simulate`` runs. This loses nothing: what they build is
  acyclic (tuples of ints and enum members, lists of those, lists of floats), so
  reference counting frees it exactly as before; the collector resumes on exit and
  takes the new objects in its next ordinary pass. The switch is process-wide, so other
  threads' cyclic garbage waits too, for the length of one build.

``type_of`` reads an action's type, for scans over whole lists done in C
(``map(type_of, actions)``) rather than in a Python loop.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from operator import itemgetter

from meshdbg.worker.pipelining.ir import Action

new_action = partial(tuple.__new__, Action)
type_of = itemgetter(1)


@contextmanager
def paused_gc() -> Iterator[None]:
    """Suspend the cyclic GC for the ``with`` body; re-enable it only if it was enabled.

    Nesting is free (an inner pause finds the collector off and leaves it off).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
