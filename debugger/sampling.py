"""`Stacks`: every selected rank's Python stacks, from inside when it can answer, else from outside.

Each rank is asked through its agent stream (the agent thread answers even while the main
thread is stopped in pdb or blocked in C with the GIL released); a process that has sessions
but no agent stream is asked through one of its pdb sessions. A rank that gives no answer
within its deadline (its Python cannot run: it holds the GIL in C, or is blocked before a
handler can run) is sampled from outside with py-spy (meshdbg.host.pyspy): by the host agent
that forked it under `meshdbg run`, else by this server if it runs on its host. A rank that
answers neither way is reported with source NONE, its
last known state and why. Nothing here changes a rank's state: a rank slow to answer is busy,
not dead. The whole call is bounded (STACKS_S, then OUTSIDE_TIMEOUT_S, plus the trip to the
rank's host: 2.1 s at most) however many ranks hang.
"""

from __future__ import annotations

import asyncio
import socket

from meshdbg.host.pyspy import PySpyError, py_spy_stacks
from meshdbg.debugger.selection import Selection
from meshdbg.debugger.sessions import Session
from meshdbg.debugger.workers import Worker, WorkerRegistry
from meshdbg.wire.errors import MeshdbgError
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import StackSource, State

# py-spy's own bound. It needs 20-30 ms on an idle machine, but on a loaded one (a training
# node's data loaders; CI) 0.8 s was too short for one call in twenty, and a rank stuck holding
# the GIL, the one `stacks` is for, showed as not answering.
OUTSIDE_TIMEOUT_S = 1.2


async def collect_stacks(workers: WorkerRegistry, selection: Selection, all_threads: bool, inside_s: float
                         ) -> list[pb.RankStacks]:
    """The stacks of every selected worker, and of every selected process known only by its
    sessions; by rank, each asked from inside for `inside_s` before py-spy is tried from outside.
    NoMatchError when nothing is selected."""
    chosen = workers.select(selection)
    lone = _lone_sessions(workers, selection)
    if not chosen and not lone:
        raise workers.no_match(selection)
    host = socket.gethostname()
    answers = await asyncio.gather(*(_of_worker(workers, w, all_threads, host, inside_s) for w in chosen),
                                   *(_of_session(s, all_threads, inside_s) for s in lone))
    return sorted(answers, key=lambda r: (r.identity.rank, r.identity.name, r.identity.pid))


def _lone_sessions(workers: WorkerRegistry, selection: Selection) -> list[Session]:
    """One session per selected process that has no live agent stream (its first session)."""
    with_agent = {(w.identity.hostname, w.pid) for w in workers.workers() if w.outbox is not None}
    first: dict[tuple[str, int], Session] = {}
    for session in workers.sessions.sessions():
        key = (session.identity.hostname, session.identity.pid)
        if key not in with_agent and selection.matches(session.rank, session.coords):
            first.setdefault(key, session)
    return list(first.values())


async def _of_worker(workers: WorkerRegistry, worker: Worker, all_threads: bool, host: str, inside_s: float
                     ) -> pb.RankStacks:
    state = workers.state(worker)
    identity = workers.info(worker).identity
    if state is State.EXITED:
        return _none(identity, state, "the process has exited")
    problem = "no agent stream yet"
    if worker.outbox is not None:
        try:
            answer = await asyncio.wait_for(worker.sample(all_threads), inside_s)
            return _answered(identity, state, StackSource.AGENT, answer)
        except asyncio.TimeoutError:
            problem = f"no answer from inside within {inside_s:g} s"
        except MeshdbgError as exc:
            problem = str(exc)
    if workers.outside is not None:  # a launcher's rank: py-spy on the host that forked it
        sample = workers.outside(worker, all_threads, OUTSIDE_TIMEOUT_S)
    elif worker.identity.hostname != host:
        return _none(identity, state, f"{problem}; not on this server's host ({host}), so py-spy cannot sample it")
    else:
        sample = py_spy_stacks(worker.pid, all_threads, OUTSIDE_TIMEOUT_S)
    try:
        threads = await sample
    except PySpyError as exc:
        return _none(identity, workers.state(worker), f"{problem}; {exc}")
    return pb.RankStacks(identity=identity, state=workers.state(worker).pb, source=StackSource.PY_SPY.pb, threads=threads)


async def _of_session(session: Session, all_threads: bool, inside_s: float) -> pb.RankStacks:
    try:
        answer = await asyncio.wait_for(session.sample(all_threads), inside_s)
    except asyncio.TimeoutError:
        return _none(session.identity, session.state, f"its session gave no answer within {inside_s:g} s")
    except MeshdbgError as exc:
        return _none(session.identity, session.state, str(exc))
    return _answered(session.identity, session.state, StackSource.SESSION, answer)


def _answered(identity: pb.Identity, state: State, source: StackSource, answer: pb.SampledStacks) -> pb.RankStacks:
    if answer.error:
        return _none(identity, state, f"sampling failed in the worker: {answer.error}")
    return pb.RankStacks(identity=identity, state=state.pb, source=source.pb, threads=answer.threads)


def _none(identity: pb.Identity, state: State, error: str) -> pb.RankStacks:
    return pb.RankStacks(identity=identity, state=state.pb, source=StackSource.NONE.pb, error=error)
