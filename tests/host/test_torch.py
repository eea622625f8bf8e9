"""torch.distributed across hosts, unchanged: MASTER_ADDR/PORT from host 0, gloo over the hosts' network."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.torch


@pytest.mark.timeout(120)
def test_gloo_all_reduce_across_two_hosts(multi_run) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=2", "allreduce.py")
    run.join("h1", "h2")
    assert run.finish(timeout=90) == 0, run.stderr
    sums = {int(m[1]): (m[2], int(m[3])) for m in re.finditer(r"SUM (\d) (\S+) (\d+)", run.stdout)}
    assert sums == {0: ("h1", 10), 1: ("h1", 10), 2: ("h2", 10), 3: ("h2", 10)}
