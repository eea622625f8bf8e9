"""Pause-safe collectives: while a rank is paused in pdb, its peers' collectives must not time out.

A torch.distributed process group aborts a collective that waits longer than its timeout
(30 min for gloo, 10 min for NCCL by default; often set much shorter). A rank paused in pdb
makes every peer wait in its next collective. As `torch.distributed.breakpoint` does, meshdbg
raises the timeout of every process group in every worker while any rank is paused, and puts
the old timeouts back once none is: the server sends each agent a CollectivesTimeout when the
first session opens and when the last one closes (meshdbg.debugger.collectives).

What is extended: collectives started while the pause lasts (gloo and NCCL), and, for NCCL,
the collectives already in flight (torch's ephemeral timeout). A gloo collective that was
already waiting when the pause began keeps the deadline it started with: gloo fixes it when
the collective starts. Processes that never imported torch.distributed are left alone.

A group made while the pause lasts gets it too, found within LATE_GROUP_S, in a process that
had imported torch.distributed when the pause began: a rank still finishing
`init_process_group` when its peer stopped (its group was not there yet when the pause was
told, and its first collective then timed out; seen once in CI), or `new_group`.
"""

from __future__ import annotations

import sys
import threading
from datetime import timedelta
from typing import TYPE_CHECKING

from meshdbg.worker.notices import say

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

LATE_GROUP_S = 0.1  # how often a pause looks for process groups made since it began

_lock = threading.Lock()
_original: dict[ProcessGroup, timedelta] = {}  # process group → its timeout before the first pause
_extended: set[ProcessGroup] = set()  # the groups given the pause's timeout
_pause = 0.0  # the timeout of the pause under way (0: none)
_over = threading.Event()  # set when the pause ends: the look for late groups stops


def _groups() -> list[ProcessGroup]:
    """The initialised process groups of this process ([] without torch.distributed)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return []
    return list(dist.distributed_c10d._world.pg_map)


def _timeout_of(group: ProcessGroup) -> timedelta | None:
    import torch

    for device in ("cpu", "cuda"):
        try:
            return group._get_backend(torch.device(device)).options._timeout
        except (RuntimeError, AttributeError):
            continue
    return None


def set_pause_timeout(seconds: float) -> None:
    """`seconds` > 0: give every process group that timeout (remembering the old ones), and
    each one made while the pause lasts; 0: restore."""
    global _pause, _over
    with _lock:
        # (a process that had not imported torch.distributed is left alone)
        began = seconds > 0 and not _pause and "torch.distributed" in sys.modules
        _pause = seconds
        if seconds > 0:
            _extend(_groups(), seconds, in_flight=True)
        else:
            _over.set()
            _restore()
        if began:
            _over = over = threading.Event()
    if began:
        threading.Thread(target=_extend_late_groups, args=(over,), name="meshdbg-collectives", daemon=True).start()


def _extend(groups: list[ProcessGroup], seconds: float, in_flight: bool) -> None:
    """Give `groups` the pause's timeout (with `in_flight`, NCCL's collectives under way too). Lock held."""
    if not groups:
        return
    from torch.distributed import distributed_c10d as c10d

    for group in groups:
        if group not in _original and (timeout := _timeout_of(group)) is not None:
            _original[group] = timeout
        c10d._set_pg_timeout(timedelta(seconds=seconds), group)
        _extended.add(group)
    if in_flight:
        c10d._add_ephemeral_timeout_for_all_pgs(timedelta(seconds=seconds))


def _restore() -> None:
    """Every group back to its own timeout. Lock held."""
    groups = _groups()
    if groups:
        from torch.distributed import distributed_c10d as c10d

        for group, timeout in _original.items():
            if group in groups:
                c10d._set_pg_timeout(timeout, group)
    _original.clear()
    _extended.clear()


def _extend_late_groups(over: threading.Event) -> None:
    """While the pause lasts, every LATE_GROUP_S: the groups made since get its timeout."""
    while not over.wait(LATE_GROUP_S):
        with _lock:
            if over.is_set():
                return
            try:
                _extend([group for group in _groups() if group not in _extended], _pause, in_flight=False)
            except Exception as exc:  # torch's private API moved, or a group is being destroyed
                say(f"meshdbg: could not extend a new process group's timeout ({type(exc).__name__}: {exc})\n")
                return


def apply(seconds: float) -> None:
    """set_pause_timeout for the agent thread: a failure is reported on stderr, never raised."""
    try:
        set_pause_timeout(seconds)
    except Exception as exc:  # torch's private API moved, or a group is being destroyed
        say(f"meshdbg: could not {'extend' if seconds > 0 else 'restore'} the process groups' "
                         f"timeouts ({type(exc).__name__}: {exc})\n")
