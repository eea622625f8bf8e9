"""The worker's half of pause-safe collectives (meshdbg.worker.collectives), in a process of
its own (a process group is process-wide): a pause told before the process group existed
reaches it once it does, and the group's own timeout comes back when the pause ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import datetime, os, tempfile, time
    import torch.distributed as dist
    from meshdbg.worker import collectives

    def timeout_s(group=None):
        group = group or dist.group.WORLD
        return group._get_backend(__import__("torch").device("cpu")).options._timeout.total_seconds()

    def wait_until(condition, limit=10.0):
        deadline = time.monotonic() + limit
        while not condition():
            assert time.monotonic() < deadline, timeout_s()
            time.sleep(0.01)

    collectives.set_pause_timeout(3600)  # the pause reaches this rank still in init_process_group
    store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1, timeout=datetime.timedelta(seconds=2))
    wait_until(lambda: timeout_s() == 3600)
    print("extended", flush=True)
    collectives.set_pause_timeout(0)
    print("restored", timeout_s(), flush=True)
    collectives.set_pause_timeout(600)  # a second pause: the world group at once...
    assert timeout_s() == 600
    late = dist.new_group([0], timeout=datetime.timedelta(seconds=3))  # ...and a group made during it, soon after
    wait_until(lambda: timeout_s(late) == 600)
    collectives.set_pause_timeout(0)
    print("second pause", timeout_s(), timeout_s(late), flush=True)
    dist.destroy_process_group()
""")


@pytest.mark.torch
def test_a_pause_told_before_the_process_group_existed_reaches_it() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["extended", "restored 2.0", "second pause 2.0 3.0"], done.stdout
