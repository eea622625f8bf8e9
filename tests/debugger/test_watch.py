"""Stops, crashes and exits as news: `serve` announces them, `meshdbg watch [--json]` streams them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pexpect

from meshdbg.debugger.control import SessionView, WorkerView
from meshdbg.debugger.news import News
from meshdbg.wire.vocabulary import EndReason, State, StopReason, WatchKind

WORKER = Path(__file__).parent / "console" / "stopping_worker.py"
WAIT_S = 20.0


def spawn(env: dict[str, str], *args: str) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "meshdbg", *args], env=env, encoding="utf-8", timeout=WAIT_S)
    child.logfile_read = io.StringIO()
    return child


def test_serve_announces_each_stop_and_exit_and_watch_streams_them(private_runtime_dir: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MESHDBG_")}
    env.update(MESHDBG_RUNTIME_DIR=str(private_runtime_dir), PYTHONUNBUFFERED="1")
    serve = spawn(env, "serve", "--port", "0")
    watchers: list[pexpect.spawn] = []
    worker = None
    try:
        serve.expect("serving on")
        watchers = [spawn(env, "watch", "--json"), spawn(env, "watch")]
        worker_env = dict(env, MESHDBG_RANK="2", MESHDBG_COORDS="hosts=0,gpus=2",
                          PYTHONBREAKPOINT="meshdbg.worker.remote_breakpointhook")
        worker = subprocess.Popen([sys.executable, "-m", "meshdbg.worker.mesh.bootstrap", str(WORKER)], env=worker_env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stop_line = "rank 2 (hosts=0,gpus=2) stopped at stopping_worker.py:17 <module> (breakpoint); meshdbg attach 2"
        serve.expect_exact(f"meshdbg: {stop_line}")
        as_json, as_text = watchers
        as_text.expect_exact(stop_line)
        as_json.expect(r"\{.*\}\r?\n")
        stopped = json.loads(as_json.match.group(0))
        assert stopped["event"] == "stopped" and stopped["rank"] == 2 and stopped["coords"] == {"hosts": 0, "gpus": 2}
        assert stopped["lineno"] == 17 and stopped["reason"] == "breakpoint"
        resumed = subprocess.run([sys.executable, "-m", "meshdbg", "continue"], env=env, capture_output=True,
                                 text=True, timeout=WAIT_S)
        assert resumed.returncode == 0, resumed.stderr
        serve.expect_exact("meshdbg: rank 2 (hosts=0,gpus=2) exited (status 0)")
        as_text.expect_exact("rank 2 (hosts=0,gpus=2) exited (status 0)")
        as_json.expect(r"\{.*\}\r?\n")
        exited = json.loads(as_json.match.group(0))
        assert exited["event"] == "exited" and exited["exit_code"] == 0 and exited["rank"] == 2
        worker.wait(timeout=WAIT_S)
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait()
        for child in (serve, *watchers):
            child.close(force=True)
    assert "Traceback" not in serve.logfile_read.getvalue()


def view(rank: int, state: State = State.STOPPED, reason: str = StopReason.BREAKPOINT, session_id: int = 1
         ) -> SessionView:
    return SessionView(id=session_id, name="worker", rank=rank, coords={"gpus": rank}, hostname="h", pid=9,
                       thread="MainThread", thread_id=1, state=state, reason=reason, filename="/x/train.py",
                       function="step", lineno=40, context={})


def test_news_tells_each_stop_once_a_post_mortem_as_a_crash_and_exits_with_their_status() -> None:
    news = News()
    first = news.feed(WatchKind.OPENED, view(2), None)
    assert first is not None and first.text() == "rank 2 (gpus=2) stopped at train.py:40 step (breakpoint); meshdbg attach 2"
    assert news.feed(WatchKind.UPDATED, view(2), None) is None  # the same stop, again
    assert news.feed(WatchKind.UPDATED, view(2, State.RUNNING), None) is None
    assert news.feed(WatchKind.CLOSED, view(2), EndReason.CONTINUED) is None
    crash = news.feed(WatchKind.OPENED, view(2, reason=StopReason.POST_MORTEM, session_id=2), None)
    assert crash is not None and crash.text().startswith("rank 2 (gpus=2) crashed: post-mortem at train.py:40")
    worker = WorkerView(name="worker", rank=3, coords={"gpus": 3}, hostname="h", pid=9, state=State.EXITED, reason="",
                        filename="", function="", lineno=0, exit_code=None, signal=9, launcher="meshdbg")
    exited = news.feed(WatchKind.EXITED, worker, None)
    assert exited is not None and exited.text() == "rank 3 (gpus=3) exited (SIGKILL)"
    assert exited.to_json()["event"] == "exited" and exited.to_json()["signal"] == 9
    lost = news.feed(WatchKind.CLOSED, view(4, session_id=5), EndReason.WORKER_GONE)  # no agent stream
    assert lost is not None and lost.text() == "rank 4 (gpus=4) exited: the worker went away"
    assert news.feed(WatchKind.EXITED, WorkerView(**{**worker.to_json(), "rank": 4}), None) is None  # told once
