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
"""

from __future__ import annotations

import sys
import threading
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

_lock = threading.Lock()
_original: dict[ProcessGroup, timedelta] = {}  # process group → its timeout before the first pause


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
    """`seconds` > 0: give every process group that timeout (remembering the old ones); 0: restore."""
    with _lock:
        groups = _groups()
        if not groups:
            return
        from torch.distributed import distributed_c10d as c10d

        if seconds > 0:
            for group in groups:
                if group not in _original and (timeout := _timeout_of(group)) is not None:
                    _original[group] = timeout
                c10d._set_pg_timeout(timedelta(seconds=seconds), group)
            c10d._add_ephemeral_timeout_for_all_pgs(timedelta(seconds=seconds))  # NCCL's in-flight collectives
        else:
            for group, timeout in _original.items():
                if group in groups:
                    c10d._set_pg_timeout(timeout, group)
            _original.clear()


def apply(seconds: float) -> None:
    """set_pause_timeout for the agent thread: a failure is reported on stderr, never raised."""
    try:
        set_pause_timeout(seconds)
    except Exception as exc:  # torch's private API moved, or a group is being destroyed
        sys.stderr.write(f"meshdbg: could not {'extend' if seconds > 0 else 'restore'} the process groups' "
                         f"timeouts ({type(exc).__name__}: {exc})\n")
