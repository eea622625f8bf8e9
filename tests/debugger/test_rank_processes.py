"""A rank stopped in several processes (a multiprocessing pool's children, a DataLoader's
workers: they inherit their parent's rank) is answered for process by process: `cast` and
`compare` name each answer's process (`rank 0 (pid 4242):`), where both read `rank 0
(MainThread):`, the same label for different answers."""

from __future__ import annotations

import json

from e2e import Server


def test_cast_and_compare_name_the_process_of_each_answer_of_one_rank(server: Server) -> None:
    parent = server.worker("pool_children.py", 0)
    server.wait_sessions(2)
    pids = sorted(s["pid"] for s in server.sessions())
    cast = server.cli("cast", "all", "p __import__('os').getpid()")
    cast_json = server.cli("cast", "--json", "all", "p __import__('os').getpid()")
    compare_json = server.cli("compare", "--json", "all", "__import__('os').getpid()")
    compared = server.cli("compare", "all", "v")
    ambiguous = server.cli("attach", "--plain", "0", "MainThread")
    resumed = server.cli("continue")
    out, _ = parent.communicate(timeout=30)
    assert resumed.returncode == 0 and out == "[10, 20]\n", (resumed.stderr, out)
    assert cast.stdout == "".join(f"rank 0 (pid {pid}):\n  {pid}\n" for pid in pids), cast.stdout
    assert "MainThread" not in compared.stdout, compared.stdout
    assert ambiguous.returncode != 0 and ambiguous.stderr == (  # `attach 0 MainThread` would pick either
        f"meshdbg: rank 0 is stopped in a thread MainThread in 2 processes; name one by its thread id: "
        f"{pids[0]} (pid {pids[0]}), {pids[1]} (pid {pids[1]})\n"), ambiguous.stderr
    for pid in pids:
        assert f"pid {pid}" in compared.stdout, compared.stdout
    assert sorted((r["pid"], r["output"]) for r in json.loads(cast_json.stdout)) == [(pid, f"{pid}\n") for pid in pids]
    groups = json.loads(compare_json.stdout)
    assert sorted((g["sessions"][0]["pid"], g["value"]) for g in groups) == [(pid, str(pid)) for pid in pids], groups
