"""Execute one rank's lowered schedule with torch: F, I, W, B on stage modules, SEND/RECV
over torch.distributed point-to-point, the loss on the last stage.

The scheduler modules (IR, schedules, lowering, simulator) stay free of torch; this module,
`split_backward` and `toymodel` are the parts of `meshdbg.worker.pipelining` that import it. Each action runs inside
`debug_context(stage=..., microbatch=..., action=...)`, so a `breakpoint()` in a stage's
forward opens a session that `meshdbg list` shows with that context, and
`pipeline_context()` tells user code where it is.

I and W are `meshdbg.worker.pipelining.split_backward`; B is one autograd call.
"""

from __future__ import annotations

import contextvars
import sys
import time
from types import CodeType
from dataclasses import dataclass, field
from typing import Callable, Sequence

try:
    import torch
    import torch.distributed as dist
except ImportError as exc:  # the scheduler works without torch; running a schedule needs it
    raise ImportError("the pipeline runtime needs torch: pip install 'meshdbg[torch]'") from exc

from meshdbg.wire.vocabulary import StopReason
from meshdbg.worker.context import debug_context
from meshdbg.worker.hook import stop_at, stop_in_next_call
from meshdbg.worker.pipelining.ir import Action, ActionType, Schedule, parts
from meshdbg.worker.pipelining.progress import TRACKER
from meshdbg.worker.pipelining.split_backward import SplitBackward, WeightBackward, run_backward

T = ActionType
RECVS_AHEAD = 2  # receives posted beyond the one being waited for (see PipelineRuntime._take_recv)
LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class PipelineContext:
    """Where the calling code is in the schedule."""

    rank: int
    stage: int
    microbatch: int
    action: str


_current: contextvars.ContextVar[PipelineContext | None] = contextvars.ContextVar("pipeline_context", default=None)


def pipeline_context() -> PipelineContext | None:
    """The action the pipeline runtime is executing in this thread, if any."""
    return _current.get()


@dataclass
class StepStats:
    """One optimizer step on one rank: the loss (last stage only) and where the time went."""

    loss: float | None
    step_s: float
    busy_s: float
    idle_s: float

    @property
    def bubble(self) -> float:
        """Fraction of the step this rank spent waiting for its peers."""
        return self.idle_s / self.step_s if self.step_s > 0 else 0.0


@dataclass
class _Microbatch:
    """What one stage keeps for one microbatch between its forward and its backward."""

    input: torch.Tensor | None = None
    output: torch.Tensor | None = None
    output_grad: torch.Tensor | None = None
    input_grad: torch.Tensor | None = None
    weight_backward: WeightBackward | None = None  # what I kept for W


@dataclass
class _StepState:
    slots: dict[tuple[int, int], _Microbatch] = field(default_factory=dict)
    sends: list[dist.Work] = field(default_factory=list)
    recvs: dict[Action, tuple[torch.Tensor, dist.Work]] = field(default_factory=dict)
    next_recv: int = 0
    loss: torch.Tensor | None = None
    busy_s: float = 0.0
    idle_s: float = 0.0

    def slot(self, stage: int, microbatch: int) -> _Microbatch:
        return self.slots.setdefault((stage, microbatch), _Microbatch())


class PipelineRuntime:
    """Runs `schedule.actions[rank]` (lowered) on `modules` (stage -> module) each step.

    `fuse_linear=False` runs every W through autograd: for hooks on the weights'
    AccumulateGrad nodes, which the fused Linear W would skip (see `split_backward`).
    """

    def __init__(self, schedule: Schedule, rank: int, modules: dict[int, torch.nn.Module], loss_fn: LossFn,
                 activation_shape: Sequence[int], dtype: torch.dtype = torch.float32, fuse_linear: bool = True) -> None:
        self.schedule = schedule
        self.rank = rank
        self.modules = modules
        self.loss_fn = loss_fn
        self.activation_shape = tuple(activation_shape)
        self.dtype = dtype
        self.last_stage = schedule.num_stages - 1
        self.actions = schedule.actions[rank]
        self.recv_actions = [a for a in self.actions if isinstance(a, Action) and a.type in (T.RECV_F, T.RECV_B)]
        expected = {s for s, r in enumerate(schedule.stage_to_rank) if r == rank}
        if set(modules) != expected:
            raise ValueError(f"rank {rank} runs stages {sorted(expected)} but got modules for {sorted(modules)}")
        self.split = {stage: SplitBackward(module, fuse_linear) for stage, module in modules.items()}
        TRACKER.attach(schedule, rank)

    def parameters(self) -> list[torch.nn.Parameter]:
        return [p for stage in sorted(self.modules) for p in self.modules[stage].parameters()]

    def step(self, inputs: torch.Tensor | None, targets: torch.Tensor | None) -> StepStats:
        """Run every action of this rank once; gradients accumulate into the modules' `.grad`.

        `inputs` (split into microbatches along dim 0) is needed on the rank of stage 0 and
        `targets` on the rank of the last stage; other ranks may pass None.
        """
        microbatches = self.schedule.microbatches
        chunks_in = inputs.chunk(microbatches) if inputs is not None else None
        chunks_target = targets.chunk(microbatches) if targets is not None else None
        state = _StepState()
        started = time.perf_counter()
        tracker = TRACKER
        tracker.begin_step()
        self._post_recvs(state, RECVS_AHEAD)
        for index, entry in enumerate(self.actions):
            tracker.begin(index)
            for action in parts(entry):  # an overlapped F+B runs its forward, then its backward
                token = _current.set(PipelineContext(self.rank, action.stage, action.microbatch, str(action)))
                try:
                    with debug_context(stage=action.stage, microbatch=action.microbatch, action=action):
                        if tracker.breaks_on(action):  # `meshdbg break`: stop in pdb right before it
                            self._run_stopped(action, state, chunks_in, chunks_target)
                        else:
                            self._run(action, state, chunks_in, chunks_target)
                except Exception as exc:
                    # The error itself travels on (a post-mortem lands where it was raised); the
                    # note names the rank and the action wherever it is printed.
                    exc.add_note(f"meshdbg: rank {self.rank} failed in action {action}")
                    raise
                finally:
                    _current.reset(token)
            tracker.end(index)
        tracker.end_actions()
        waited = time.perf_counter()
        for work in state.sends:
            work.wait()
        tracker.end_step()
        state.idle_s += time.perf_counter() - waited
        step_s = time.perf_counter() - started
        loss = float(state.loss) if state.loss is not None else None
        return StepStats(loss, step_s, state.busy_s, step_s - state.busy_s)

    # ---- actions ----------------------------------------------------------------------

    def _run_stopped(self, action: Action, state: _StepState, chunks_in: Sequence[torch.Tensor] | None,
                     chunks_target: Sequence[torch.Tensor] | None) -> None:
        """Run `action` stopped in pdb right before it: for an F, at the first line of the stage
        module's `forward` (the user's frame); else here, on the line that runs it."""
        forward = getattr(type(self.modules.get(action.stage)), "forward", None)
        code = getattr(forward, "__code__", None)
        if action.type is T.F and isinstance(code, CodeType) and sys.gettrace() is None:
            forget = stop_in_next_call(lambda frame: frame.f_code is code, StopReason.BREAKPOINT)
            try:
                self._run(action, state, chunks_in, chunks_target)
            finally:
                forget()
        else:
            stop_at(sys._getframe(), StopReason.BREAKPOINT)
            self._run(action, state, chunks_in, chunks_target)

    def _run(self, action: Action, state: _StepState, chunks_in: Sequence[torch.Tensor] | None,
             chunks_target: Sequence[torch.Tensor] | None) -> None:
        stage, kind, microbatch = action
        slot = state.slot(stage, microbatch)
        began = time.perf_counter()
        if kind is T.RECV_F:
            slot.input = self._take_recv(action, state).requires_grad_()
        elif kind is T.RECV_B:
            slot.output_grad = self._take_recv(action, state)
        elif kind is T.SEND_F:
            output = _made(slot.output, "the output", action)
            state.sends.append(self._send(output.detach(), stage + 1, self._tag(T.SEND_F, stage, microbatch)))
        elif kind is T.SEND_B:
            input_grad = _made(slot.input_grad, "the input gradient", action)
            state.sends.append(self._send(input_grad, stage - 1, self._tag(T.SEND_B, stage, microbatch)))
        else:
            self._compute(stage, kind, microbatch, slot, state, chunks_in, chunks_target)
            state.busy_s += time.perf_counter() - began

    def _compute(self, stage: int, kind: ActionType, microbatch: int, slot: _Microbatch, state: _StepState,
                 chunks_in: Sequence[torch.Tensor] | None, chunks_target: Sequence[torch.Tensor] | None) -> None:
        if kind is T.F:
            if stage == 0:
                if chunks_in is None:
                    raise ValueError("stage 0 runs on this rank: step() needs the inputs")
                slot.input = chunks_in[microbatch]
            elif slot.input is None:  # the previous stage runs here: hand over in memory
                previous = _made(state.slot(stage - 1, microbatch).output, "the previous stage's output",
                                 (stage, kind, microbatch))
                slot.input = previous.detach().requires_grad_()
            output = self.modules[stage](slot.input)
            if stage == self.last_stage:
                if chunks_target is None:
                    raise ValueError("the last stage runs on this rank: step() needs the targets")
                output = self.loss_fn(output, chunks_target[microbatch]) / self.schedule.microbatches
                state.loss = output.detach() if state.loss is None else state.loss + output.detach()
            slot.output = output
            return
        if slot.output_grad is None and stage < self.last_stage:
            slot.output_grad = state.slot(stage + 1, microbatch).input_grad  # next stage ran here
        wanted_input = slot.input if slot.input is not None and slot.input.requires_grad else None
        if kind is T.B:
            output = _made(slot.output, "the output", (stage, kind, microbatch))
            seed = slot.output_grad if slot.output_grad is not None else torch.ones_like(output)
            run_backward((output,), (seed,), (), keep_graph=False, accumulate=True)
            slot.input_grad = wanted_input.grad if wanted_input is not None else None
            self._release(slot)
        elif kind is T.I:
            slot.input_grad, slot.weight_backward = self.split[stage].backward_input(
                _made(slot.output, "the output", (stage, kind, microbatch)), slot.output_grad, wanted_input)
            self._release(slot)
        elif kind is T.W:
            if slot.weight_backward is None:
                raise RuntimeError(f"W of stage {stage} microbatch {microbatch} before its I")
            slot.weight_backward.run()
            slot.weight_backward = None

    @staticmethod
    def _release(slot: _Microbatch) -> None:
        """Drop what the backward no longer needs; the input gradient may still be sent."""
        slot.output = None
        slot.output_grad = None

    # ---- communication ----------------------------------------------------------------

    def _tag(self, kind: ActionType, stage: int, microbatch: int) -> int:
        """A tag unique per (direction, sending stage, microbatch) within a step."""
        direction = 0 if kind is T.SEND_F else 1
        return (direction * self.schedule.num_stages + stage) * self.schedule.microbatches + microbatch

    def _peer(self, stage: int) -> int:
        return self.schedule.stage_to_rank[stage]

    def _post_recvs(self, state: _StepState, count: int) -> None:
        """Post (irecv) the next `count` receives of this rank's list.

        gloo moves a message only once its receive is posted, so a receive posted when the
        RECV action is reached costs a round trip to the sender after the wait begins;
        posted ahead, the data arrives while this rank computes.
        """
        for action in self.recv_actions[state.next_recv:state.next_recv + count]:
            stage, kind, microbatch = action
            from_stage, sent_as = (stage - 1, T.SEND_F) if kind is T.RECV_F else (stage + 1, T.SEND_B)
            buffer = torch.empty(self.activation_shape, dtype=self.dtype)
            work = dist.irecv(buffer, src=self._peer(from_stage), tag=self._tag(sent_as, from_stage, microbatch))
            state.recvs[action] = buffer, _posted(work)
        state.next_recv += count

    def _take_recv(self, action: Action, state: _StepState) -> torch.Tensor:
        """The data of RECV `action` (posted ahead), after posting one more receive in its place.

        Receives are taken in list order and each tag is unique within a step, so at most
        RECVS_AHEAD + 1 buffers are in flight and no message can match the wrong receive.
        """
        buffer, work = state.recvs.pop(action)
        self._post_recvs(state, 1)
        work.wait()
        return buffer

    def _send(self, tensor: torch.Tensor, to_stage: int, tag: int) -> dist.Work:
        return _posted(dist.isend(tensor.contiguous(), dst=self._peer(to_stage), tag=tag))


def _made(tensor: torch.Tensor | None, what: str, action: tuple[int, ActionType, int]) -> torch.Tensor:
    """`tensor`, which an earlier action of a valid schedule made; a clear error if none did."""
    if tensor is None:
        stage, kind, microbatch = action
        raise RuntimeError(f"{kind} of stage {stage} microbatch {microbatch} before {what} it needs was made")
    return tensor


def _posted(work: dist.Work | None) -> dist.Work:
    """What isend/irecv return; None only for a rank outside the group, which every rank here is in."""
    if work is None:
        raise RuntimeError("torch.distributed posted no send or receive: this rank is not in the default group")
    return work
