"""`import pdb; pdb.set_trace()` and `pdb.post_mortem()` in a rank of `meshdbg run` stop in a
meshdbg session, where local pdb stops on the same script (the oracle), as `breakpoint()` does.

A rank has no terminal for local pdb: it read the end of its input; set_trace's quit with
BdbQuit, and the failed rank stopped the whole mesh; post_mortem's went on at once. And
`PYTHONBREAKPOINT=0`, Python's own switch, turns breakpoint() off in a run's ranks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import serving, wait_for, with_meshdbg_pth
from mesh_helpers import SCRIPTS, Cli, start_run
from meshdbg.wire.errors import UsageError
from meshdbg.worker.mesh.bootstrap import under_pdb

SCRIPT = "pdb_set_trace.py"
POST_MORTEM = "pdb_post_mortem.py"
INSTANCE = "pdb_instance.py"
FIRST_LINE = "first_line.py"
LOCATION = re.compile(r"^(?:\(Pdb\) )?> .+\((?P<lineno>\d+)\)(?P<function>.+)\(\)$", re.MULTILINE)  # (after a prompt)


def _local_pdb_stops(*argv: str, typed: str = "c\n" * 5) -> list[tuple[int, str]]:
    """The (line, function) local pdb stops at in `python ARGV` (a script: continued at each
    stop; `-m pdb SCRIPT`: quit at the first, `typed="q\\n"`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MESHDBG_", "PYTHONBREAKPOINT"))}
    done = subprocess.run([sys.executable, *argv], cwd=SCRIPTS, input=typed, capture_output=True, text=True,
                          timeout=30, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return [(int(found["lineno"]), found["function"]) for found in LOCATION.finditer(done.stdout)]


def _wait_both_stopped_at(cli: Cli, lineno: int, function: str) -> None:
    def stopped_here() -> list[dict] | None:
        done = cli("list", "--json")
        sessions = json.loads(done.stdout) if done.returncode == 0 else []
        return sessions if (len(sessions) == 2 and all(
            s["state"] == "stopped" and (s["lineno"], s["function"]) == (lineno, function) for s in sessions)) else None

    wait_for(stopped_here, 30, f"both ranks stopped at line {lineno} ({function})")


def _through_stops(tmp_path: Path, args: list[str], stops: list[tuple[tuple[int, str], str]]) -> tuple[list[str], str]:
    """`meshdbg run --mesh procs=2 ARGS`: at each (where, command) of `stops` both ranks stop
    where local pdb stopped, `command` is cast to both and they are continued; the run ends in
    success; what each cast printed, and the run's output."""
    run = start_run(tmp_path, "--mesh", "procs=2", *args)
    casts = []
    try:
        for (lineno, function), command in stops:
            _wait_both_stopped_at(run.cli, lineno, function)
            cast = run.cli("cast", "all", command)
            assert cast.returncode == 0, cast.stdout + cast.stderr
            casts.append(cast.stdout)
            assert run.cli("continue", "all").returncode == 0
        code, out, err = run.finish()
    finally:
        run.kill()
    assert code == 0 and "BdbQuit" not in out + err, err
    return casts, out


def _x_then_y_in_both_ranks(tmp_path: Path, script: str, expected: list[tuple[int, str]]) -> tuple[list[str], str]:
    """`_through_stops` of `script` on two ranks (`x = rank * 10`, then `y = x + 1`): `p x` at the
    first stop, `p y` at the second, each rank's value checked."""
    casts, out = _through_stops(tmp_path, [script], list(zip(expected, ("p x", "p y"))))
    for cast, values in zip(casts, ((0, 10), (1, 11))):
        assert all(f"  {value}\n" in cast for value in values), cast
    return casts, out


def test_pdb_set_trace_in_ranks_stops_in_sessions_where_local_pdb_stops(tmp_path: Path) -> None:
    expected = _local_pdb_stops(SCRIPT)
    assert len(expected) == 2
    casts, out = _x_then_y_in_both_ranks(tmp_path, SCRIPT, expected)
    # the header printed as the second stop began comes with its first command's output
    assert "rank 0 checks y" in casts[1] and "rank 1 checks y" in casts[1], casts[1]
    assert "rank 0 done 1" in out and "rank 1 done 11" in out


def test_a_pdb_the_program_makes_stops_in_sessions_where_local_pdb_stops(tmp_path: Path) -> None:
    """`pdb.Pdb(...).set_trace()` and a subclass's (ipdb's debugger is one) read the rank's
    stdin, which has no terminal: local pdb quit at once and BdbQuit failed the rank. One with
    lines of its own runs where it is, as locally."""
    expected = _local_pdb_stops(INSTANCE)[:2]  # (the scripted one's stop is its own, in its own output)
    _, out = _x_then_y_in_both_ranks(tmp_path, INSTANCE, expected)
    assert "rank 0 done 1 scripted 1" in out and "rank 1 done 11 scripted 1" in out


def test_run_minus_m_pdb_stops_every_rank_at_its_script_s_first_line_as_python_m_pdb(tmp_path: Path) -> None:
    """`meshdbg run ... -m pdb SCRIPT ARGS`: each rank stops where `python -m pdb SCRIPT` stops
    (its pdb read the rank's stdin, which has no terminal, and quit: the script never ran).
    `-c continue` runs it, and pdb's other commands are refused with one line."""
    [first] = _local_pdb_stops("-m", "pdb", FIRST_LINE, "a", typed="q\n")[:1]
    [cast], out = _through_stops(tmp_path, ["-m", "pdb", FIRST_LINE, "a"], [(first, "p __name__")])
    assert "'__main__'" in cast, cast
    assert "rank 0 ran with ['a']" in out and "rank 1 ran with ['a']" in out
    for commands, status, said in ((["-c", "continue"], 0, "rank 1 ran with ['a']"),
                                   (["-c", "b 3"], 2, "pdb's -c 'b 3': only `-c continue` here")):
        run = start_run(tmp_path, "--mesh", "procs=2", "-m", "pdb", *commands, FIRST_LINE, "a")
        try:
            code, out, err = run.finish()
        finally:
            run.kill()
        assert code == status and said in out + err, out + err


def test_run_minus_c_stops_every_rank_where_python_minus_c_stops(tmp_path: Path) -> None:
    """`meshdbg run ... -c CODE ARGS`, as `python -c CODE ARGS` (it was refused: "unrecognized
    arguments: -c"): each rank stops where local pdb stops in the same code, at `<string>`."""
    code = "import os, sys\nx = int(os.environ.get('RANK', '0')) * 10\nbreakpoint()\nprint('done', x, sys.argv)\n"
    [stop] = _local_pdb_stops("-c", code, "a")
    assert stop[1] == "<module>"  # (line 4 before 3.13, the breakpoint() line 3 from 3.13 on)
    casts, out = _through_stops(tmp_path, ["-c", code, "a"], [(stop, "p x")])
    assert "  0\n" in casts[0] and "  10\n" in casts[0], casts[0]
    assert "done 10 ['-c', 'a']" in out, out


def test_pdb_post_mortem_in_ranks_opens_a_post_mortem_session_and_the_rank_goes_on(tmp_path: Path) -> None:
    [stop] = _local_pdb_stops(POST_MORTEM)
    [cast], out = _through_stops(tmp_path, [POST_MORTEM], [(stop, "p scale")])
    assert "  2\n" in cast and "  3\n" in cast, cast
    assert "rank 0 went on" in out and "rank 1 went on" in out


def test_pdb_calls_where_the_hook_names_meshdbg_open_sessions_without_meshdbg_run(tmp_path: Path) -> None:
    """A process started by anything else (torchrun, srun, a pool) with PYTHONBREAKPOINT naming
    meshdbg and no terminal: meshdbg.pth routes pdb's set_trace and post_mortem too, and a
    `pdb.Pdb().set_trace()` of the program's own."""
    stops = _local_pdb_stops("pdb_calls.py")
    assert len(stops) == 3
    with serving(tmp_path) as server:
        worker = subprocess.Popen([sys.executable, "pdb_calls.py"], cwd=SCRIPTS, text=True, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(server.env, PYTHONBREAKPOINT="meshdbg.set_trace",
                                           PYTHONPATH=with_meshdbg_pth(tmp_path)))
        server.workers.append(worker)
        seen: set[int] = set()
        for (lineno, function), reason in zip(stops, ("breakpoint", "pdb.post_mortem", "breakpoint")):
            session = wait_for(lambda: next((s for s in server.sessions() if s["state"] == "stopped"
                                             and s["id"] not in seen), None), 30, f"a stop at line {lineno}")
            seen.add(session["id"])
            assert (session["lineno"], session["function"], session["reason"]) == (lineno, function, reason)
            cast = server.cli("cast", "all", "p x")
            assert cast.returncode == 0 and "  7\n" in cast.stdout, cast.stdout + cast.stderr
            assert server.cli("continue").returncode == 0
        out, err = worker.communicate(timeout=30)
    assert worker.returncode == 0 and "done 7" in out and "BdbQuit" not in err, err


def test_pythonbreakpoint_0_turns_breakpoint_off_in_every_rank_as_pythons_own(tmp_path: Path) -> None:
    """`PYTHONBREAKPOINT=0 meshdbg run ...`: the ranks' breakpoint() does nothing, as Python's
    (the launcher set the ranks' PYTHONBREAKPOINT to meshdbg's hook whatever the run had, and an
    unattended run waited at every leftover breakpoint()); pdb.set_trace() still stops, as locally."""
    run = start_run(tmp_path, "--mesh", "procs=2", "values.py", env_extra={"PYTHONBREAKPOINT": "0"})
    try:
        code, out, err = run.finish()
    finally:
        run.kill()
    assert code == 0 and "stopped at" not in err, err


def test_what_follows_minus_m_pdb_is_read_as_pdb_reads_it() -> None:
    assert under_pdb(["job.py", "-c", "b 3"]) == (["job.py", "-c", "b 3"], True)  # the program's own options
    assert under_pdb(["-m", "pkg", "x"]) == (["-m", "pkg", "x"], True)
    for continuing in (["-c", "continue"], ["-cc"], ["--command=cont"], ["--command", "c"]):
        assert under_pdb([*continuing, "job.py"]) == (["job.py"], False), continuing
    for wrong in ([], ["-m"], ["-h", "job.py"], ["-x", "job.py"], ["-c"], ["-c", "b 3", "job.py"]):
        with pytest.raises(UsageError):
            under_pdb(wrong)
