"""Threads are visible in the CLI: a rank stopped in two threads (tests/scripts/threads.py,
threads worker-0 and worker-1 with `mine` = 0 and 100) against a real `meshdbg serve`."""

from __future__ import annotations

import json
import re

from e2e import Server


def test_list_cast_compare_and_attach_name_the_thread(server: Server) -> None:
    server.worker("threads.py", 0)
    sessions = server.wait_sessions(2)
    ids = {s["thread"]: s["id"] for s in sessions}
    table = server.cli("list").stdout
    assert re.search(r"THREAD\s+SESSION", table)
    for thread, session_id in ids.items():
        assert re.search(rf"{thread}\s+#{session_id}\s", table), table

    cast = server.cli("cast", "0", "p mine").stdout.splitlines()
    assert cast == ["rank 0 (worker-0):", "  0", "rank 0 (worker-1):", "  100"]
    same = server.cli("cast", "0", "p 'same'").stdout.splitlines()
    assert same == ["rank 0 (worker-0, worker-1):", "  'same'"]

    compared = server.cli("compare", "0", "mine")
    assert compared.stdout.splitlines() == ["rank 0 (worker-0): 0", "rank 0 (worker-1): 100"]
    groups = json.loads(server.cli("compare", "--json", "0", "mine").stdout)
    assert [[s["thread"] for s in g["sessions"]] for g in groups] == [["worker-0"], ["worker-1"]]

    by_thread_id = str(next(s["thread_id"] for s in sessions if s["thread"] == "worker-1"))
    for thread in ("worker-1", by_thread_id):
        attached = server.cli("attach", "--plain", "0", thread, input="p mine\ndetach\n")
        assert attached.returncode == 0 and "100" in attached.stdout and "\n0\n" not in attached.stdout, attached
    missing = server.cli("attach", "--plain", "0", "nosuch", input="detach\n")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "rank 0 has no session in thread nosuch (its threads: worker-0" in missing.stderr, missing.stderr
