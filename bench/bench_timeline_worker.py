"""bench_timeline.py's worker: bench_core_worker.py with the moments of each command marked.

    python bench/bench_timeline_worker.py MARKS_FILE ROUNDS WORK_S

Wraps (in this process only, before the first breakpoint) the points of meshdbg's worker a
`p x` passes: the server's line taken off the stream (`received`), pdb's command begun and
done (`command`, `done`: pdb's own precmd and postcmd hooks), the prompt handed to the stream
(`replying`). Each mark is a name and time.monotonic_ns(), the clock the server's side reads
too; they go to MARKS_FILE, one `name nanoseconds` a line, when the process exits.
"""

from __future__ import annotations

import atexit
import functools
import sys
import time
from pathlib import Path
from typing import Any, Callable

import bench_core_worker

from meshdbg.worker.pdb_wrapper import PdbWrapper
from meshdbg.worker.remote import RemoteSession

MARKS: list[tuple[str, int]] = []


def marked(method: Callable[..., Any], before: str | None = None, after: str | None = None,
           when: Callable[..., bool] = lambda *_: True) -> Callable[..., Any]:
    """`method`, marking `before` it runs and `after` it returns, when `when(*args)` holds."""
    @functools.wraps(method)
    def wrapper(*args: Any) -> Any:
        if before is not None and when(*args):
            MARKS.append((before, time.monotonic_ns()))
        result = method(*args)
        if after is not None and when(*args):
            MARKS.append((after, time.monotonic_ns()))
        return result
    return wrapper


def is_prompt(_session: RemoteSession, message: Any) -> bool:
    return message.WhichOneof("kind") == "prompt"


def main() -> None:
    marks_file, rounds, work_s = sys.argv[1:4]
    RemoteSession._server_message = marked(RemoteSession._server_message,  # type: ignore[method-assign]
                                           after="received")  # (what `receive` and `send_then_receive` return)
    RemoteSession.send = marked(RemoteSession.send, before="replying", when=is_prompt)  # type: ignore[method-assign]
    PdbWrapper.precmd = marked(PdbWrapper.precmd, before="command")  # type: ignore[method-assign]
    PdbWrapper.postcmd = marked(PdbWrapper.postcmd, before="done")  # type: ignore[method-assign]
    atexit.register(lambda: Path(marks_file).write_text("".join(f"{name} {ns}\n" for name, ns in MARKS)))
    sys.argv = [str(Path(__file__).with_name("bench_core_worker.py")), rounds, work_s]
    bench_core_worker.main()  # called, not run through runpy: a breakpoint under runpy's frames would be meshdbg's own


if __name__ == "__main__":
    main()
