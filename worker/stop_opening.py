"""Whether the calling thread is opening a stop now: a stop asked for meanwhile is that stop.

An agent's interrupt is a signal whose handler runs in the main thread between any two
bytecodes, and a program's own signal handler may call breakpoint(): either can land inside
meshdbg's own code while a stop opens. Nested there, it waited for good on a hold the first
had taken (SharedHold's lock), or opened a second session that never stopped, listed running
for good; the rank was lost either way. So a stop asked for while one opens is not one more:
`meshdbg.worker.hook.stop_at` returns at once when OPENING.now says so.

A stop opens from `stop_at` (a breakpoint(), an interrupt of a running rank: set for the whole
stop), or from inside pdb's trace function (an interrupt that came while a session ended, a
post-mortem: set by `PdbWrapper.interaction` until the stop is under way, when pdb counts as
stopped). Set and reset in place, never with a call around a stop's `set_trace` (a context
manager's exit was a call, where the local pdb of a worker with no server stopped).
"""

from __future__ import annotations

import threading


class _Opening(threading.local):
    now = False


OPENING = _Opening()
