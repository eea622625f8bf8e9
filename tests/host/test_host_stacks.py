"""`stacks` of a rank stuck in C on another host: py-spy runs there, through its host agent."""

from __future__ import annotations

import json

from e2e import wait_for


def test_a_rank_stuck_in_c_on_another_host_is_sampled_there(multi_run) -> None:
    run = multi_run("--mesh", "hosts=2,gpus=1", "stuck_c.py")
    run.join("h1", "h2")
    wait_for(lambda: (r := run.cli("h1", "list", "--json")).returncode == 0 and len(json.loads(r.stdout)) == 1,
             30, "rank 0 stopped")
    done = run.cli("h1", "stacks", "--json", "1")
    assert done.returncode == 0, done.stderr
    (group,) = json.loads(done.stdout)
    assert group["ranks"] == [1] and group["sources"] == {"py-spy": [1]}, group
    assert group["frames"][-1]["function"] == "match", group  # re.match, where it is stuck, seen on h2
    assert any(f["function"] == "match_forever" for f in group["frames"])
    run.process.terminate()
    assert run.finish() == 130
