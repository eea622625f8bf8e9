"""The program's standard descriptors (0, 1, 2) kept apart from meshdbg's own.

A process whose fd 1 or 2 is closed (a daemon's, `python job.py >&- 2>&-`) gives the lowest
free number to the next descriptor opened, so meshdbg's socket, poller or pipe took it: the
program's next write to its stdout would have gone into meshdbg's stream, and meshdbg's capture
of fd 1 and 2 (meshdbg.worker.fd_capture) put its pipe over gRPC's descriptor. gRPC's poller
then failed at every turn, logging thousands of lines a second into the session, and the stop
never answered. So before meshdbg opens a descriptor (a session's stream, the run's agent),
each standard one that is closed is opened on /dev/null, as a daemon does for itself.
"""

from __future__ import annotations

import os

STANDARD = (0, 1, 2)


def reserve_closed() -> None:
    """Open /dev/null on each of fd 0, 1 and 2 that is closed (inheritable, as standard
    descriptors are)."""
    for fd in STANDARD:
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one, the ones below being open
            if opened != fd:  # another thread took it meanwhile
                os.close(opened)
                continue
            os.set_inheritable(fd, True)
