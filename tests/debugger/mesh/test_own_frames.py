"""Under `meshdbg run`, pdb shows and stops in the user's frames only (not the fork server,
the bootstrap or runpy), and stepping off the end of the script ends the session cleanly."""

from __future__ import annotations

from pathlib import Path

from mesh_helpers import start_run
from watching import wait_sessions


def test_bt_up_and_stepping_stay_in_the_users_frames(tmp_path: Path) -> None:
    run = start_run(tmp_path, "--mesh", "gpus=2", "nested.py")
    try:
        run.wait_workers(lambda by_rank: len(by_rank) == 2, "two ranks", timeout=30)
        wait_sessions(run.env, {"stopped": [0, 1]}, timeout=30)
        where = run.cli("cast", "0", "bt")
        assert where.returncode == 0, where.stderr
        frames = [line for line in where.stdout.splitlines() if line.strip().startswith(("/", ">"))]
        assert "nested.py" in frames[0] and "<module>()" in frames[0], where.stdout
        assert not any(part in where.stdout for part in ("runpy", "bootstrap.py", "zygote.py", "meshdbg/worker"))
        for _ in range(3):  # inner → outer → <module> → no further: the bootstrap is not a frame
            top = run.cli("cast", "0", "up")
        assert "Oldest frame" in top.stdout
        for _ in range(8):  # return out of inner, outer, and off the end of the module
            stepped = run.cli("cast", "0", "n")
            assert "runpy" not in stepped.stdout and "bootstrap" not in stepped.stdout, stepped.stdout
            assert "threading.py" not in stepped.stdout
            if "ended" in stepped.stdout or stepped.returncode != 0:
                break
        sessions = wait_sessions(run.env, {"live": [1]}, timeout=15)  # rank 0's session ended
        assert [s["rank"] for s in sessions] == [1]
        assert run.cli("continue").returncode == 0
        out, err = run.process.communicate(timeout=30)
        assert run.process.returncode == 0, err
    finally:
        if run.process.poll() is None:
            run.process.kill()
            run.process.communicate()
