"""Who waits for whom in a running pipeline, and the one cause of a stall.

Each rank reports where its runtime stands in its lowered list (meshdbg.worker.pipelining.progress).
A rank in a ``RECV`` waits for one ``SEND`` of one peer (the stage before for ``RECV_F``, the
stage after for ``RECV_B``, same microbatch); a rank past its last action waits for its sends
to be received. Following those edges from every waiting rank ends at a root:

* a cycle: each rank of it waits for a SEND that another will only reach after its own RECV
  (a schedule whose order deadlocks);
* a peer paused in pdb, or one that exited, before the SEND;
* a peer that is busy computing (slow), or a SEND already made whose data has not arrived.

A rank stopped in a post-mortem session after failing in a RECV (gloo raises when the peer's
connection closes) is followed on to the peer it waited for, so a rank that was killed is
named as the cause, not the neighbour that crashed because of it.

The root that explains the most waiting ranks is the stall's cause, in one line. Pure logic
on plain values: the debugger builds ``RankStatus`` from the wire (meshdbg.debugger.pipeline_view).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from meshdbg.wire.vocabulary import State
from meshdbg.worker.pipelining.ir import Action, ActionType, Overlap, parse_action

T = ActionType


@dataclass(frozen=True)
class RankStatus:
    """One rank as the debugger knows it: its worker state and, when it answered, its runtime's place.

    ``why`` says how a stopped rank is stopped (``paused in pdb at train.py:30``) or how an
    exited one ended; ``error`` why it gave no report.
    """

    rank: int
    state: State
    why: str = ""
    crashed: bool = False  # stopped in a post-mortem session: where it was is where it failed
    error: str = ""
    breaks: tuple[str, ...] = ()
    stage_to_rank: tuple[int, ...] = ()
    actions: tuple[str, ...] = ()
    step: int = -1
    position: int = 0
    in_step: bool = False
    since_s: float = 0.0
    coords: dict[str, int] = field(default_factory=dict)

    @property
    def runs_pipeline(self) -> bool:
        return bool(self.actions)

    @property
    def doing(self) -> str:
        """The action it runs or waits in, or what it does between them."""
        if not self.runs_pipeline:
            return ""
        if not self.in_step:
            return "before its first step" if self.step < 0 else "between steps"
        if self.position < len(self.actions):
            return self.actions[self.position]
        return "waiting for its sends to be received"

    def done(self, index: int, step: int) -> bool:
        """Whether this rank has finished its action at `index` of step `step`."""
        if self.step != step:
            return self.step > step
        return not self.in_step or self.position > index


class Wait(NamedTuple):
    """`rank`, in `action` (a RECV, or past its last action), waits for `peer`'s action `needs`."""

    rank: int
    action: str
    peer: int
    needs: str

    def __str__(self) -> str:
        return f"rank {self.rank} waits in {self.action} for rank {self.peer}'s {self.needs}"


def _sender(action: Action) -> Action:
    """The SEND whose data a RECV takes."""
    if action.type is T.RECV_F:
        return Action(action.stage - 1, T.SEND_F, action.microbatch)
    return Action(action.stage + 1, T.SEND_B, action.microbatch)


def _receiver(action: Action) -> Action:
    """The RECV that takes a SEND's data."""
    if action.type is T.SEND_F:
        return Action(action.stage + 1, T.RECV_F, action.microbatch)
    return Action(action.stage - 1, T.RECV_B, action.microbatch)


def wait_of(status: RankStatus, by_rank: dict[int, RankStatus]) -> Wait | None:
    """What `status`'s rank waits for, if it waits for a peer (a RECV, or its sends at a step's end)."""
    if not status.runs_pipeline or not status.in_step or not (status.state is State.RUNNING or status.crashed):
        return None
    if status.position < len(status.actions):
        action = parse_action(status.actions[status.position])
        if isinstance(action, Overlap) or action.type not in (T.RECV_F, T.RECV_B):
            return None
        needs = _sender(action)
        return Wait(status.rank, str(action), status.stage_to_rank[needs.stage], str(needs))
    for text in status.actions:  # past its last action: a send not yet received
        action = parse_action(text)
        if isinstance(action, Overlap) or action.type not in (T.SEND_F, T.SEND_B):
            continue
        taker = _receiver(action)
        peer = by_rank.get(status.stage_to_rank[taker.stage])
        if peer is not None and peer.runs_pipeline and str(taker) in peer.actions and not peer.done(
                peer.actions.index(str(taker)), status.step):
            return Wait(status.rank, status.doing, peer.rank, str(taker))
    return None


def cause_of(start: Wait, waits: dict[int, Wait], by_rank: dict[int, RankStatus]) -> tuple[str, Wait | None]:
    """The root of the chain of waits from `start`: what it is, in words that do not depend on
    where the chain started, and the chain's last link (the wait on the root; None for a cycle)."""
    path = [start]
    while True:
        wait = path[-1]
        peer = by_rank.get(wait.peer)
        if peer is None:
            return f"rank {wait.peer} is not part of this query", wait
        if peer.state is State.EXITED:
            return f"rank {peer.rank} {peer.why or State.EXITED}", wait
        doing = f" (in {peer.doing})" if peer.doing else ""
        if peer.state is State.STOPPED and not (peer.crashed and peer.rank in waits):
            return f"rank {peer.rank} is {peer.why or 'paused in pdb'}{doing}", wait
        if not peer.runs_pipeline:
            return f"rank {peer.rank} gives no report ({peer.error or 'it runs no pipeline'})", wait
        index = peer.actions.index(wait.needs) if wait.needs in peer.actions else -1
        if index >= 0 and peer.done(index, by_rank[wait.rank].step):
            return f"rank {peer.rank} already ran {wait.needs}: its data is in flight", wait
        onward = waits.get(peer.rank)  # (a crashed peer failed waiting: follow it to why)
        if onward is None:
            return f"rank {peer.rank} is slow: in {peer.doing} for {peer.since_s:.1f} s", wait
        cycle_start = next((i for i, w in enumerate(path) if w.rank == peer.rank), None)
        if cycle_start is not None:
            cycle = path[cycle_start:]
            first = min(range(len(cycle)), key=lambda i: cycle[i].rank)  # one text whatever the entry
            cycle = cycle[first:] + cycle[:first]
            return "deadlock, the schedule's order cannot finish: " + "; ".join(map(str, cycle)), None
        path.append(onward)


@dataclass(frozen=True)
class Stall:
    """Every wait, and the cause that holds up the most ranks waiting STALL_AFTER_S or longer
    (none: no rank waits that long)."""

    waits: dict[int, Wait]
    cause: str
    held: tuple[int, ...]  # the waiting ranks that cause holds up
    links: tuple[Wait, ...] = ()  # the waits on the root itself

    @property
    def summary(self) -> str:
        """The one line: the cause, who waits on it directly, and every rank it holds up."""
        if not self.cause:
            return f"no stall: no rank has waited for a peer for {STALL_AFTER_S:g} s"
        links = "".join(f"; {link}" for link in self.links)
        return f"stall: {self.cause}{links}  [holds up rank{'s' if len(self.held) > 1 else ''} {', '.join(map(str, self.held))}]"


STALL_AFTER_S = 1.0  # a wait shorter than this is the pipeline's normal rhythm


def find_stall(statuses: list[RankStatus]) -> Stall:
    """Who waits for whom among `statuses`, and the stall's cause (see the module docstring)."""
    by_rank = {status.rank: status for status in statuses}
    waits = {s.rank: w for s in statuses if (w := wait_of(s, by_rank)) is not None}
    causes: dict[str, tuple[list[int], list[Wait]]] = {}
    for rank, wait in waits.items():
        if by_rank[rank].since_s >= STALL_AFTER_S:
            root, link = cause_of(wait, waits, by_rank)
            held, links = causes.setdefault(root, ([], []))
            held.append(rank)
            if link is not None and link not in links:
                links.append(link)
    if not causes:
        return Stall(waits, "", ())
    cause, (held, links) = max(causes.items(), key=lambda item: (len(item[1][0]), -min(item[1][0])))
    return Stall(waits, cause, tuple(sorted(held)), tuple(sorted(links)))
