"""What `meshdbg pipeline` and `meshdbg break` show of a pipeline job's ranks.

Each rank's answer (`Pipeline` RPC, meshdbg.debugger.pipeline_query) becomes a
`PipelineRankView`: its worker as `list --all` shows it, and a `RankStatus` that the stall
analysis (meshdbg.worker.pipelining.waits) reads. `pipeline_table` and `pipeline_json` are
the two ways it is printed; the cause of a stall comes last, in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from meshdbg.debugger.format import _columns, exit_text, rank_label, where
from meshdbg.debugger.selection import ranks_text
from meshdbg.debugger.views import WorkerView
from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.wire.vocabulary import State, StopReason
from meshdbg.worker.pipelining.actual import Comparison, RankStep, compare, describe
from meshdbg.worker.pipelining.errors import ScheduleError
from meshdbg.worker.pipelining.ir import Schedule, parse_action, parse_action_pattern, parts
from meshdbg.worker.pipelining.picture import to_comparison_svg, to_trace
from meshdbg.worker.pipelining.progress import StepTimes
from meshdbg.worker.pipelining.waits import RankStatus, Stall, find_stall


@dataclass(frozen=True)
class PipelineRankView:
    """One rank: its worker, its place in the schedule, its recorded steps (wall-clock starts)."""

    worker: WorkerView
    status: RankStatus
    kind: str = ""
    stages_per_rank: int = 0
    microbatches: int = 0
    steps: tuple[StepTimes, ...] = ()

    @property
    def shape(self) -> str:
        """The schedule it runs, as a heading says it: `1f1b: 4 stages, 4 microbatches`."""
        return f"{self.kind}: {len(self.status.stage_to_rank)} stages, {self.microbatches} microbatches"

    @classmethod
    def from_pb(cls, answer: pb.PipelineRank) -> "PipelineRankView":
        worker = WorkerView.from_pb(answer.worker)
        report, progress = answer.report, answer.report.progress
        status = RankStatus(
            rank=worker.rank, state=worker.state, why=_why(worker), error=answer.error or report.error,
            crashed=worker.state is State.STOPPED and worker.reason == StopReason.POST_MORTEM,
            breaks=tuple(report.breaks), stage_to_rank=tuple(progress.stage_to_rank), actions=tuple(progress.actions),
            step=progress.step if report.HasField("progress") else -1, position=progress.position,
            in_step=progress.in_step, since_s=progress.since_s, coords=worker.coords)
        steps = tuple(StepTimes(s.step, s.started, list(s.starts), list(s.ends)) for s in progress.steps)
        return cls(worker, status, progress.kind, progress.stages_per_rank, progress.microbatches, steps)


def _why(worker: WorkerView) -> str:
    """How a stopped rank is stopped, or how an exited one ended; empty while it runs."""
    if worker.state is State.STOPPED:
        kind = "in a post-mortem session" if worker.reason and StopReason(worker.reason).post_mortem else "paused in pdb"
        return f"{kind} at {where(worker)}"
    if worker.state is State.EXITED:
        return f"exited ({exit_text(worker)})"
    return ""


def _doing(view: PipelineRankView, stall: Stall) -> str:
    status = view.status
    wait = stall.waits.get(status.rank)
    if status.state is not State.RUNNING:
        return " ".join(filter(None, (status.why, f"({status.doing})" if status.doing else "")))
    if not status.runs_pipeline:
        return status.error or "runs no pipeline"
    return f"{status.doing} <- rank {wait.peer}'s {wait.needs}" if wait else status.doing


def pipeline_table(views: list[PipelineRankView]) -> str:
    """A row per rank (step, actions done/left, what it does and for how long, its action
    breakpoints), then the stall's cause in one line."""
    stall = find_stall([v.status for v in views])
    header = ("RANK", "COORDS", "STEP", "DONE/LEFT", "DOING", "FOR", "BREAKS")
    rows = [header]
    for view in views:
        status = view.status
        runs = status.runs_pipeline and status.step >= 0
        progress = f"{status.position}/{len(status.actions) - status.position}" if status.in_step else "-"
        rows.append((str(status.rank), view.worker.coords_text or "-", str(status.step) if runs else "-",
                     progress if runs else "-", _doing(view, stall),
                     f"{status.since_s:.1f} s" if runs and status.state is State.RUNNING else "-",
                     " ".join(status.breaks) or "-"))
    kind = next((v for v in views if v.kind), None)
    heading = f"{kind.shape}\n" if kind else "no rank runs a pipeline\n"
    return heading + _columns(rows) + f"\n{stall.summary}"


def pipeline_json(views: list[PipelineRankView]) -> dict:
    """`pipeline --json`: `{"ranks": [...], "stall": {"cause", "held"}}`."""
    stall = find_stall([v.status for v in views])
    ranks = []
    for view in views:
        status, wait = view.status, stall.waits.get(view.status.rank)
        ranks.append({
            "rank": status.rank, "coords": view.worker.coords, "state": status.state, "why": status.why,
            "kind": view.kind, "step": status.step, "actions_done": status.position if status.in_step else None,
            "actions_left": len(status.actions) - status.position if status.in_step else None,
            "doing": status.doing, "since_s": status.since_s, "breaks": list(status.breaks),
            "waits_for": {"rank": wait.peer, "action": wait.needs} if wait else None, "error": status.error,
        })
    return {"ranks": ranks, "stall": {"cause": stall.cause, "held": list(stall.held)}}


def comparison_of(views: list[PipelineRankView]) -> Comparison:
    """The last step every rank recorded, as run and as planned (meshdbg.worker.pipelining.actual);
    ScheduleError when the ranks run no common schedule or share no recorded step."""
    running = [v for v in views if v.status.runs_pipeline]
    if not running or len(running) < len(views):
        idle = [v.status.rank for v in views if not v.status.runs_pipeline]
        raise ScheduleError(f"{ranks_text(idle)} report{'s' if len(idle) == 1 else ''} no pipeline: "
                            "planned against actual needs every rank of the job" if idle else "no rank runs a pipeline")
    first = running[0]
    if [v.status.rank for v in running] != list(range(max(first.status.stage_to_rank) + 1)):
        raise ScheduleError("planned against actual needs every rank of the pipeline: select all of them")
    schedule = Schedule(first.kind, first.stages_per_rank, first.microbatches, first.status.stage_to_rank,
                        [[parse_action(text) for text in v.status.actions] for v in running])
    recorded = [{times.step: times for times in v.steps} for v in running]
    common = set.intersection(*(set(by_step) for by_step in recorded))
    if not common:
        raise ScheduleError("no step has completed on every rank yet")
    step = max(common)
    return compare(schedule, step, {rank: RankStep(by_step[step].started, by_step[step].starts, by_step[step].ends)
                                    for rank, by_step in enumerate(recorded)})


def comparison_svg(comparison: Comparison, top: int = 5) -> str:
    """`pipeline --svg`: the plan and the run on one axis, the actions that lost most outlined."""
    schedule = comparison.schedule
    heading = (f"{schedule.kind}: step {comparison.step} as run against the plan (simulated with costs fitted from "
               f"the run), {schedule.ranks} ranks, {schedule.microbatches} microbatches")
    marked = frozenset((loss.rank, loss.index) for loss in comparison.losses[:top] if loss.seconds > 0)
    bubbles = (comparison.bubble(comparison.actual), comparison.bubble(comparison.planned))
    return to_comparison_svg(schedule, comparison.planned, comparison.actual, heading, bubbles,
                             describe(comparison, top), marked)


def comparison_trace(comparison: Comparison) -> dict:
    """`pipeline --trace`: the plan (process 0) and the run (process 1) as one Perfetto trace."""
    planned = to_trace(comparison.schedule, comparison.planned, unit_us=1e6, pid=0, process="planned (simulated)")
    actual = to_trace(comparison.schedule, comparison.actual, unit_us=1e6, pid=1,
                      process=f"as run (step {comparison.step})")
    return {"traceEvents": planned["traceEvents"] + actual["traceEvents"], "displayTimeUnit": "ms"}


def breaks_text(views: list[PipelineRankView], added: Sequence[str] = ()) -> str:
    """`break --list`: the action breakpoints of each rank, ranks with the same ones together;
    then, for each pattern just `added` that no selected rank's schedule has an action for (a
    microbatch or stage past the schedule's), a note that it will never stop them."""
    groups: dict[tuple[str, ...], list[int]] = {}
    problems = []
    for view in views:
        if view.status.error:
            problems.append(f"{rank_label(view.worker)}: {view.status.error}")
        else:
            groups.setdefault(view.status.breaks, []).append(view.status.rank)
    lines = [f"{ranks_text(ranks)}: {' '.join(breaks) or 'no action breakpoints'}" for breaks, ranks in groups.items()]
    return "\n".join(lines + problems + _never_matched(views, added))


def _never_matched(views: list[PipelineRankView], added: Sequence[str]) -> list[str]:
    """A note for each pattern of `added` that matches no action the selected ranks run (said
    only when every selected rank reported its schedule)."""
    if not views or not added or any(not view.status.actions for view in views):
        return []
    runs = {action for view in views for entry in view.status.actions for action in parts(parse_action(entry))}
    shapes = "; ".join(sorted({view.shape for view in views}))
    return [f"note: no action of these ranks' schedules ({shapes}) is {text}: it never stops them"
            for text in added if not any(parse_action_pattern(text).matches(action) for action in runs)]
