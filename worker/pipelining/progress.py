"""What a running pipeline runtime tells the debugger: where it is, what it timed, where to stop.

One `Tracker` per process (`TRACKER`): the runtime (meshdbg.worker.pipelining.runtime) marks
each step and action on it from the thread that runs the schedule; the worker's agent thread
(meshdbg.worker.mesh.agent) reads it to answer `meshdbg pipeline`, and changes its action
breakpoints for `meshdbg break`. The agent answers while the runtime computes, waits in a
RECV (gloo releases the GIL) or is stopped in pdb, so a hung pipeline can still say where it
hangs. Marking costs two clock reads and two list stores per action, cheap enough to stay on
(tests/worker/pipelining/test_progress.py measures it).

Torch-free, like the scheduler: only the runtime imports torch.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Iterable, NamedTuple

from meshdbg.wire.proto import debugger_pb2 as pb
from meshdbg.worker.pipelining.errors import ActionParseError
from meshdbg.worker.pipelining.ir import Action, ActionPattern, Schedule, parse_action_pattern

STEPS_KEPT = 8  # completed steps whose action times a report can carry


class StepTimes(NamedTuple):
    """One completed step: its number, its start (perf_counter) and each action's start and end."""

    step: int
    started: float
    starts: list[float]
    ends: list[float]


class Tracker:
    """One process's pipeline position, recent action times and action breakpoints."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # breakpoint changes (agent thread) against each other
        self._patterns: tuple[ActionPattern, ...] = ()
        self.schedule: Schedule | None = None
        self.rank = 0
        self.step = -1
        self.position = 0
        self.in_step = False
        self.since = time.perf_counter()
        self._started = 0.0
        self._starts: list[float] = []
        self._ends: list[float] = []
        self.history: deque[StepTimes] = deque(maxlen=STEPS_KEPT)

    # ---- the runtime's side (its own thread) -----------------------------------------

    def attach(self, schedule: Schedule, rank: int) -> None:
        """The runtime of this process runs `schedule.actions[rank]` (lowered) from now on."""
        self.schedule, self.rank, self.step, self.in_step = schedule, rank, -1, False
        self.history.clear()

    def begin_step(self) -> None:
        count = len(self.schedule.actions[self.rank]) if self.schedule else 0
        self.step += 1
        self._starts, self._ends = [0.0] * count, [0.0] * count
        self.position, self.in_step = 0, True
        self._started = self.since = time.perf_counter()

    def begin(self, index: int) -> None:
        """Action `index` of the rank's list starts (or is waited in, for a RECV)."""
        self.position = index
        self.since = self._starts[index] = time.perf_counter()

    def end(self, index: int) -> None:
        self._ends[index] = time.perf_counter()

    def end_actions(self) -> None:
        """Every action ran; the step waits for its sends to be received."""
        self.position = len(self._starts)
        self.since = time.perf_counter()

    def end_step(self) -> None:
        self.history.append(StepTimes(self.step, self._started, self._starts, self._ends))
        self.in_step = False
        self.since = time.perf_counter()

    def breaks_on(self, action: Action) -> bool:
        """Whether an action breakpoint stops the runtime right before `action`."""
        patterns = self._patterns
        return bool(patterns) and any(pattern.matches(action) for pattern in patterns)

    # ---- the debugger's side (the agent thread) --------------------------------------

    def change_breaks(self, add: Iterable[str], clear: bool = False) -> list[str]:
        """Forget every action breakpoint first if `clear`, then add the patterns `add`;
        the breakpoints after. ActionParseError (nothing changed) for a pattern that does not parse."""
        parsed = [parse_action_pattern(text) for text in add]
        with self._lock:
            kept = () if clear else self._patterns
            self._patterns = tuple(dict.fromkeys((*kept, *parsed)))
            return [str(pattern) for pattern in self._patterns]

    def report(self, request: pb.PipelineRequest) -> pb.PipelineReport:
        """The answer to a PipelineRequest: breakpoints changed as asked, then where the runtime
        stands; an error as text, never an exception (it runs on the agent thread)."""
        report = pb.PipelineReport(request_id=request.request_id)
        try:
            report.breaks.extend(self.change_breaks(request.add_breaks, request.clear_breaks))
        except ActionParseError as exc:
            report.error = str(exc)
            report.breaks.extend(str(pattern) for pattern in self._patterns)
        schedule = self.schedule
        if schedule is not None:
            report.progress.CopyFrom(self._progress(schedule, request.timings))
        return report

    def _progress(self, schedule: Schedule, timings: bool) -> pb.PipelineProgress:
        now = time.perf_counter()
        progress = pb.PipelineProgress(
            kind=schedule.kind, stages_per_rank=schedule.stages_per_rank, microbatches=schedule.microbatches,
            stage_to_rank=schedule.stage_to_rank, actions=[str(a) for a in schedule.actions[self.rank]],
            step=self.step, position=self.position, in_step=self.in_step, since_s=now - self.since)
        if timings:
            wall = time.time() - now  # perf_counter -> wall clock, so ranks on other hosts line up
            for times in list(self.history):
                progress.steps.add(step=times.step, started=times.started + wall,
                                   starts=[t - times.started for t in times.starts],
                                   ends=[t - times.started for t in times.ends])
        return progress


TRACKER = Tracker()
