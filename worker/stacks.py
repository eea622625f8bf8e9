"""A process's Python stacks as `meshdbg stacks` shows them: user frames only, outermost first.

Inside a worker, the agent thread (or a pdb session, for a process without an agent stream)
answers a SampleRequest with `sample_stacks`. For a rank that cannot answer from inside, the
server samples it from outside with py-spy and passes the frames through `user_frames` too, so
both sources hide the same things:

- the frames before the user's code (meshdbg's bootstrap, runpy),
- meshdbg's machinery and everything it called (a stopped thread ends in the user's frame
  where pdb stopped, not in bdb, pdb, meshdbg and gRPC),
- meshdbg's own threads (the agent reader, named `meshdbg-...`) and gRPC's (the channel
  threads of the session and agent streams), which show nothing of the user's.

A thread in a post-mortem session (`in_post_mortem`) is shown where it crashed: the frames
of its traceback, down to where the error was raised, not the handler it waits in (all
meshdbg's, so nothing would show).

Which files are meshdbg's is meshdbg.worker.frames' rule, the one pdb's `where` and stepping
follow (the pipeline runtime is a library the user's code calls: its frames stay).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from types import FrameType, TracebackType
from typing import Iterator, Sequence

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker.frames import is_internal_file

_DEBUGGER_ENTRY = frozenset({"bdb.py", "pdb.py", "cmd.py"})  # how the trace function enters pdb
OWN_THREAD_PREFIX = "meshdbg-"

FrameTuple = tuple[str, str, int]  # filename, function, lineno
_crashed: dict[int, TracebackType] = {}  # thread ident -> the traceback its post-mortem session shows


@contextlib.contextmanager
def in_post_mortem(traceback: TracebackType) -> Iterator[None]:
    """While the calling thread debugs `traceback` post-mortem, its sampled stack is the
    traceback's (see the module docstring)."""
    ident = threading.get_ident()
    _crashed[ident] = traceback
    try:
        yield
    finally:
        _crashed.pop(ident, None)


def _base(filename: str) -> str:
    return filename if filename.startswith("<") else os.path.basename(filename)


def user_frames(frames: Sequence[FrameTuple]) -> list[FrameTuple]:
    """The frames a user should see, outermost first (see the module docstring)."""
    start = 0
    while start < len(frames) and is_internal_file(frames[start][0]):
        start += 1
    end = next((i for i in range(start, len(frames)) if is_internal_file(frames[i][0])), len(frames))
    while end > start and _base(frames[end - 1][0]) in _DEBUGGER_ENTRY:
        end -= 1
    return list(frames[start:end])


def frames_of(frame: FrameType | None) -> list[FrameTuple]:
    """A live frame and its callers, outermost first."""
    stack: list[FrameTuple] = []
    while frame is not None:
        stack.append((frame.f_code.co_filename, frame.f_code.co_qualname, frame.f_lineno))  # as py-spy names it
        frame = frame.f_back
    stack.reverse()
    return stack


def traceback_frames(traceback: TracebackType) -> list[FrameTuple]:
    """Where a traceback leads, outermost first: the callers of the frame that caught it,
    then each of its entries at the line it was at, down to where the error was raised."""
    stack = frames_of(traceback.tb_frame.f_back)
    entry: TracebackType | None = traceback
    while entry is not None:
        code = entry.tb_frame.f_code
        stack.append((code.co_filename, code.co_qualname, entry.tb_lineno))
        entry = entry.tb_next
    return stack


def thread_stack(thread_id: int, name: str, main: bool, frames: Sequence[FrameTuple]) -> pb.ThreadStack:
    return pb.ThreadStack(thread_id=thread_id, thread_name=name, main=main,
                          frames=[pb.Frame(filename=f, function=fn, lineno=line) for f, fn, line in frames])


def shown(name: str, main: bool, all_threads: bool) -> bool:
    """Whether a thread is sampled: the main thread always, others with `all_threads` unless
    they are meshdbg's own."""
    return main or (all_threads and not name.startswith(OWN_THREAD_PREFIX))


def machinery_only(frames: Sequence[FrameTuple]) -> bool:
    """A thread that runs nothing but thread start-up and gRPC (a channel's own threads)."""
    return all(_base(f) == "threading.py" or f"{os.sep}grpc{os.sep}" in f for f, _, _ in frames)


def thread_stacks(threads: Sequence[tuple[int, str, bool, Sequence[FrameTuple]]]) -> list[pb.ThreadStack]:
    """(thread id, name, is main, raw frames outermost first) → the ThreadStacks to show, main first."""
    stacks = []
    for thread_id, name, main, raw in threads:
        frames = user_frames(raw)
        if main or not machinery_only(frames):
            stacks.append(thread_stack(thread_id, name, main, frames))
    return sorted(stacks, key=lambda stack: (not stack.main, stack.thread_name, stack.thread_id))


def sample_stacks(all_threads: bool) -> list[pb.ThreadStack]:
    """This process's stacks: the main thread's, or every user thread's (main first)."""
    main = threading.main_thread()
    by_ident = {thread.ident: thread for thread in threading.enumerate()}
    threads = []
    for ident, frame in sys._current_frames().items():
        is_main = ident == main.ident
        thread = by_ident.get(ident)
        name = thread.name if thread is not None else f"Thread {ident}"
        if not shown(name, is_main, all_threads):  # (the agent thread sampling is meshdbg's own)
            continue
        native_id = (thread.native_id if thread is not None else None) or ident
        crashed = _crashed.get(ident)
        threads.append((native_id, name, is_main, traceback_frames(crashed) if crashed else frames_of(frame)))
    return thread_stacks(threads)


def answer_sample(request: pb.SampleRequest) -> pb.SampledStacks:
    """The answer to a SampleRequest; the error as text, never an exception."""
    try:
        return pb.SampledStacks(request_id=request.request_id, threads=sample_stacks(request.all_threads))
    except Exception as exc:  # a sample must never break the thread that answers it
        return pb.SampledStacks(request_id=request.request_id, error=f"{type(exc).__name__}: {exc}")
