"""Two interrupts land just so: the first as a `c` ends the session (the stop it asks for opens
its session from inside pdb's trace function, at the next line), the second just as that
session opens. The second is that stop, not a second session. Each signal is raised where one
once landed (1 round in ~12,000 of tests/faults/test_stop_races.py's loop, under load)."""

import signal
from typing import Any, Callable

from meshdbg.worker import output, remote
from meshdbg.worker.mesh.agent import INTERRUPT_SIGNAL


def interrupted_after(owner: type, name: str, then: Callable[[], None] = lambda: None) -> None:
    """The next call of `owner.name` is followed by the agent's interrupt, its handler run there."""
    original = getattr(owner, name)

    def once(self: Any, *args: Any, **kwargs: Any) -> Any:
        setattr(owner, name, original)
        result = original(self, *args, **kwargs)
        then()
        signal.raise_signal(INTERRUPT_SIGNAL)
        return result

    setattr(owner, name, once)


interrupted_after(remote.RemoteSession, "end", then=lambda: interrupted_after(output.StreamedOutput, "open_session"))
breakpoint()  # the test continues it: its end is followed by the first interrupt
word = "interrupted"  # where the interrupt's stop opens
print("ran on", flush=True)
