"""Text shown to people: the session and worker tables, and cast output grouped by identical text.

Shared by the CLI and the console so both print the same thing.
"""

from __future__ import annotations

import os
import signal
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Iterable, Sequence

from meshdbg.debugger.views import SessionView, WorkerView
from meshdbg.debugger.selection import ranks_text
from meshdbg.wire.vocabulary import HOST_LOST, State

if TYPE_CHECKING:
    from meshdbg.debugger.answers import CastResult

PDB_ERROR_PREFIX = "*** "
PDB_PROMPT = "(Pdb) "  # pdb's own prompt, as pdb writes it


def shown_name(view: SessionView | WorkerView) -> str:
    """The worker name where it says something: "" for the default worker."""
    return "" if view.name in ("", "worker") else view.name


def rank_label(view: SessionView | WorkerView) -> str:
    """`rank 2 (hosts=1,gpus=0)`, naming the worker when it is not the default one."""
    name = shown_name(view)
    who = f"{name} rank {view.rank}" if name else f"rank {view.rank}"
    return f"{who} ({view.coords_text})" if view.coords_text else who


def where(session: SessionView | WorkerView) -> str:
    if not session.filename:
        return "-"
    return f"{os.path.basename(session.filename)}:{session.lineno} {session.function}"


def session_table(sessions: Sequence[SessionView]) -> str:
    """Aligned columns, one row per session, or a plain sentence when there is none."""
    if not sessions:
        return "no sessions"
    header = ("RANK", "NAME", "COORDS", "STATE", "WHERE", "THREAD", "SESSION", "PID", "HOST", "CONTEXT")
    rows = [header] + [(str(s.rank), s.name, s.coords_text or "-", s.state, where(s), s.thread,
                        f"#{s.id}", str(s.pid), s.hostname, " ".join(f"{key}={value}" for key, value in s.context.items()))
                       for s in sessions]
    return _columns(rows)


def _columns(rows: Sequence[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


UNKNOWN_STATUS = "?"


def signal_name(number: int) -> str:
    """`SIGKILL`, or `signal 99` for a number no signal has."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def status_text(status: int) -> str:
    """An exit status as a shell reports it, as a person reads it: `SIGTERM` for 128 + that
    signal, else `status 1`."""
    killer = killed_by(status)
    return killer if killer is not None else f"status {status}"


def failure_text(status: int) -> str:
    """How a rank that failed ended, for `rank 3 failed first (...)`: `exit status 1`, or for
    one killed by a signal its name first (`SIGKILL, exit status 137`), as its peers' endings
    are named beside it (`ranks 0-2 SIGTERM`)."""
    killer = killed_by(status)
    return f"{killer}, exit status {status}" if killer is not None else f"exit status {status}"


def killed_by(status: int) -> str | None:
    """The name of the signal an exit status as a shell reports it (128 + the signal) stands
    for, or None: a status of 128 or less, or one above that no signal makes (255, a lost host's)."""
    try:
        return signal.Signals(status - 128).name if status > 128 else None
    except ValueError:
        return None


def exit_text(worker: WorkerView) -> str:
    """`0`, `1`, `SIGKILL`, `-` while the worker lives, or `?` for one that ended without a
    status (its agent stream broke, and no launcher of this server reaped it); `host lost` for
    one that ended with its host."""
    if worker.reason == HOST_LOST:
        return HOST_LOST
    if worker.signal is not None:
        return signal_name(worker.signal)
    if worker.exit_code is None:
        return UNKNOWN_STATUS if worker.state is State.EXITED else "-"
    return str(worker.exit_code)


def exit_note(worker: WorkerView) -> str:
    """`rank 3 (gpus=3) exited (status 1)`, or `... exited (SIGKILL)`: how a worker ended, in a line."""
    status = exit_text(worker)
    if status == UNKNOWN_STATUS and not worker.registered:
        return f"{rank_label(worker)} exited (no status: it was not started through meshdbg's bootstrap)"
    if status == UNKNOWN_STATUS:
        return f"{rank_label(worker)} exited (no status: its stream broke, as when a process is killed)"
    return f"{rank_label(worker)} exited ({'status ' + status if status.lstrip('-').isdigit() else status})"


def worker_table(workers: Sequence[WorkerView]) -> str:
    """`list --all`: every worker, stopped in pdb or not, with its exit status once exited."""
    if not workers:
        return "no workers"
    header = ("RANK", "NAME", "COORDS", "STATE", "EXIT", "WHERE", "PID", "HOST")
    rows = [header] + [(str(w.rank), w.name, w.coords_text or "-", w.state, exit_text(w), where(w), str(w.pid),
                        w.hostname) for w in workers]
    return _columns(rows)


def resumed_text(resumed: Sequence[SessionView]) -> str:
    """What `continue` says: how many sessions it resumed, and their ranks."""
    if not resumed:
        return "no stopped session could be resumed"
    plural = "s" if len(resumed) != 1 else ""
    return f"resumed {len(resumed)} session{plural} ({ranks_text([s.rank for s in resumed])})"


def not_resumed_text(left: Sequence[tuple[int, str]]) -> str:
    """What `continue` says of the ranks it left paused ((rank, why) each; why names the rank):
    not answering already (paused where they are once they answer again), busy with a command."""
    return f"not resumed: {ranks_why_text(left)}"


def not_answering_text(silent: Sequence[tuple[int, str]]) -> str:
    """What `cast` says of the ranks that are not answering ((rank, why) each; why names the
    rank, and says it is not answering): why at once, not a deadline they did not wait for."""
    return silent[0][1] if len(silent) == 1 else f"not answering: {ranks_why_text(silent)}"


def ranks_why_text(ranks: Sequence[tuple[int, str]]) -> str:
    """(rank, why) pairs in a line: the why of one; the ranks of several, and the first's why."""
    if len(ranks) == 1:
        return ranks[0][1]
    return f"{ranks_text([rank for rank, _ in ranks])} (the first: {ranks[0][1]})"


def failed(result: CastResult) -> bool:
    """A cast result that did not run, or whose pdb output is an error."""
    return not result.ok or any(line.startswith(PDB_ERROR_PREFIX) for line in result.output.splitlines())


def session_tags(sessions: Iterable[SessionView]) -> dict[int, str]:
    """What tells apart the sessions of a rank stopped in several among `sessions`, by session
    id: its thread (`sidekick`); its process when the rank's sessions are in several (the
    workers of a DataLoader or a multiprocessing pool inherit their parent's rank): `pid 4242`,
    and its thread too when that process has several (`pid 4242 sidekick`). A rank with one
    session has none."""
    sessions = list(sessions)
    per_rank = Counter((s.name, s.rank) for s in sessions)
    per_process = Counter((s.name, s.rank, s.pid) for s in sessions)
    processes = Counter((name, rank) for name, rank, _ in per_process)
    tags = {}
    for s in sessions:
        if per_rank[s.name, s.rank] < 2:
            continue
        thread = s.thread or str(s.thread_id)
        if processes[s.name, s.rank] < 2:
            tags[s.id] = thread
        else:
            tags[s.id] = f"pid {s.pid}" + (f" {thread}" if per_process[s.name, s.rank, s.pid] > 1 else "")
    return tags


def sessions_label(sessions: Sequence[SessionView], tags: dict[int, str], count: str | None = None) -> str:
    """`ranks 0-2,5 (4 ranks)` for sessions one per rank; a rank stopped in several sessions
    (`tags`, session_tags) is named with theirs: `rank 0 (MainThread, sidekick)`, `ranks 1-2,
    rank 0 (sidekick)`, `rank 0 (pid 4242, pid 4243)`."""
    plain = sorted({s.rank for s in sessions if s.id not in tags})
    by_rank: dict[int, list[str]] = defaultdict(list)
    for session in sorted(sessions, key=lambda s: (s.rank, s.pid, s.thread_id)):
        if session.id in tags:
            by_rank[session.rank].append(tags[session.id])
    parts = [ranks_text(plain, count=count if not by_rank else None)] if plain else []
    parts += [f"rank {rank} ({', '.join(names)})" for rank, names in by_rank.items()]
    return ", ".join(parts)


def grouped_cast_output(results: Sequence[CastResult]) -> str:
    """Identical outputs once under their rank set (`ranks 0-2,5 (4 ranks):`), sorted by rank;
    a rank that answered from several threads or processes names them (`rank 0 (MainThread):`,
    `rank 0 (pid 4242):`, session_tags). Ranks left
    at a prompt other than pdb's own (`>>> ` after `interact`, `(com) `, `clear`'s question)
    are told so: the next line cast to them goes there (nothing said it, and the next cast of
    a pdb command was taken as `interact`'s Python or the question's answer)."""
    groups: dict[tuple[str, str], list[SessionView]] = defaultdict(list)
    for result in results:
        text = result.output if result.ok else f"{PDB_ERROR_PREFIX}{result.error}\n"
        prompt = result.prompt if result.ok and not result.ended and result.prompt != PDB_PROMPT else ""
        groups[text, prompt].append(result.session)
    tags = session_tags(r.session for r in results)
    blocks = []
    for (text, prompt), sessions in sorted(groups.items(),
                                           key=lambda item: min((s.rank, s.pid, s.thread_id) for s in item[1])):
        label = sessions_label(sessions, tags, count=" ranks")
        body = text.rstrip("\n") or "(no output)"
        if prompt:
            body += f"\n(now at the prompt {prompt!r}: the next line cast there answers it)"
        blocks.append(f"{label}:\n" + "\n".join(f"  {line}" for line in body.splitlines()))
    return "\n".join(blocks)
