"""Execute one rank's lowered schedule with torch: F, I, W, B on stage modules, SEND/RECV
over torch.distributed point-to-point, the loss on the last stage.

The scheduler modules (IR, schedules, lowering, simulator) stay free of torch; this module is
the only part of `meshdbg.worker.pipelining` that imports it. Each action runs inside
`debug_context(stage=..., microbatch=..., action=...)`, so a `breakpoint()` in a stage's
forward opens a session that `meshdbg list` shows with that context, and
`pipeline_context()` tells user code where it is.

Split backward (`SplitBackward`, `WeightBackward`): `I` computes the gradient of the stage's
input only, and on its way takes the gradient at each autograd node where a weight's
branch leaves the input's path (for `Linear`, the gradient of its output); `W` starts from
those nodes, so it computes only the weight gradients and walks nothing `I` already
walked. This is the method of torch's `stage_backward_input` / `stage_backward_weight`;
`bench/bench_pipeline.py` measures I + W against B on the benchmark model.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

try:
    import torch
    import torch.distributed as dist
    from torch.autograd.graph import GradientEdge, Node, get_gradient_edge
    from torch.autograd.variable import Variable
except ImportError as exc:  # the scheduler works without torch; running a schedule needs it
    raise ImportError("the pipeline runtime needs torch: pip install 'meshdbg[torch]'") from exc

from meshdbg.worker.context import debug_context
from meshdbg.worker.pipelining.ir import Action, ActionType, Schedule, parts

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
    """Runs `schedule.actions[rank]` (lowered) on `modules` (stage -> module) each step."""

    def __init__(self, schedule: Schedule, rank: int, modules: dict[int, torch.nn.Module], loss_fn: LossFn,
                 activation_shape: Sequence[int], dtype: torch.dtype = torch.float32) -> None:
        self.schedule = schedule
        self.rank = rank
        self.modules = modules
        self.loss_fn = loss_fn
        self.activation_shape = tuple(activation_shape)
        self.dtype = dtype
        self.last_stage = schedule.num_stages - 1
        self.actions = schedule.actions[rank]
        self.recv_actions = [a for a in self.actions if a.type is T.RECV_F or a.type is T.RECV_B]
        expected = {s for s, r in enumerate(schedule.stage_to_rank) if r == rank}
        if set(modules) != expected:
            raise ValueError(f"rank {rank} runs stages {sorted(expected)} but got modules for {sorted(modules)}")
        self.split = {stage: SplitBackward(module) for stage, module in modules.items()}

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
        self._post_recvs(state, RECVS_AHEAD)
        for entry in self.actions:
            for action in parts(entry):  # an overlapped F+B runs its forward, then its backward
                token = _current.set(PipelineContext(self.rank, action.stage, action.microbatch, str(action)))
                try:
                    with debug_context(stage=action.stage, microbatch=action.microbatch, action=action):
                        self._run(action, state, chunks_in, chunks_target)
                except Exception as exc:
                    # The error itself travels on (a post-mortem lands where it was raised); the
                    # note names the rank and the action wherever it is printed.
                    exc.add_note(f"meshdbg: rank {self.rank} failed in action {action}")
                    raise
                finally:
                    _current.reset(token)
        waited = time.perf_counter()
        for work in state.sends:
            work.wait()
        state.idle_s += time.perf_counter() - waited
        step_s = time.perf_counter() - started
        loss = float(state.loss) if state.loss is not None else None
        return StepStats(loss, step_s, state.busy_s, step_s - state.busy_s)

    # ---- actions ----------------------------------------------------------------------

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
            state.sends.append(self._send(slot.output.detach(), stage + 1, self._tag(T.SEND_F, stage, microbatch)))
        elif kind is T.SEND_B:
            state.sends.append(self._send(slot.input_grad, stage - 1, self._tag(T.SEND_B, stage, microbatch)))
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
                slot.input = state.slot(stage - 1, microbatch).output.detach().requires_grad_()
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
        wants_input_grad = slot.input is not None and slot.input.requires_grad
        if kind is T.B:
            seed = slot.output_grad if slot.output_grad is not None else torch.ones_like(slot.output)
            _run_backward((slot.output,), (seed,), (), keep_graph=False, accumulate=True)
            slot.input_grad = slot.input.grad if wants_input_grad else None
            self._release(slot)
        elif kind is T.I:
            slot.input_grad, slot.weight_backward = self.split[stage].backward_input(
                slot.output, slot.output_grad, slot.input if wants_input_grad else None)
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
            state.recvs[action] = buffer, work
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
        return dist.isend(tensor.contiguous(), dst=self._peer(to_stage), tag=tag)


# ---- split backward ------------------------------------------------------------------------

Grad = torch.Tensor | None
_NONE = type(None)
Root = torch.Tensor | GradientEdge


def _run_backward(roots: tuple[Root, ...], grads: tuple[torch.Tensor, ...], inputs: tuple[Root, ...],
                  keep_graph: bool, accumulate: bool) -> tuple[Grad, ...]:
    """The engine call ``torch.autograd.backward`` and ``grad`` end in, without their argument
    normalisation, which costs about 30 µs a call (an eighth of a B on the benchmark model).

    ``accumulate``: add into ``.grad`` of ``inputs`` (all leaves if none), as ``backward``
    does; else return the gradients of ``inputs``, None for one the roots do not reach.
    """
    return Variable._execution_engine.run_backward(roots, grads, keep_graph, False, inputs, True, accumulate)


class WeightBackward:
    """The weight half of a split backward: per group of weights, the roots to start from
    (nodes where the weights' branches leave the input's path, with the gradients recorded
    there; or the stage output itself) and the weights to finish."""

    def __init__(self, groups: list[tuple[tuple[Root, ...], tuple[torch.Tensor, ...],
                                          tuple[GradientEdge, ...], list[tuple[Node, tuple[Grad, ...]]]]]) -> None:
        self.groups = groups

    def run(self) -> None:
        """Accumulate every weight's gradient into its ``.grad``, then drop what was kept.

        Each group asks for its own weights only, so autograd walks only their branches.
        """
        for roots, grads, weights, recorded in self.groups:
            # A root below another one of its group would get that one's flow on top of the
            # gradient recorded for it, which already holds it: make it take what was recorded.
            handles = [node.register_prehook(lambda _, seen=seen: seen) for node, seen in recorded] \
                if len(recorded) > 1 else []
            try:
                _run_backward(roots, grads, weights, keep_graph=False, accumulate=True)
            finally:
                for handle in handles:
                    handle.remove()
        self.groups = []


@dataclass(frozen=True)
class _Plan:
    """Where to take gradients in a graph of one shape: ``edges`` are (node index, output)
    pairs; each group is (start, stop, weights, several nodes): it owns ``edges[start:stop]``."""

    edges: tuple[tuple[int, int], ...]
    groups: tuple[tuple[int, int, tuple[GradientEdge, ...], bool], ...]


class SplitBackward:
    """I and W for one stage module (see the module docstring).

    Which nodes the weights branch from is worked out once per shape of the autograd graph
    (node types and edges, which weights and where the input sit) and reused while the
    shape repeats, as it does microbatch after microbatch.
    """

    def __init__(self, module: torch.nn.Module) -> None:
        params = [p for p in module.parameters() if p.requires_grad]
        # Held for the runtime's life, so each weight keeps one AccumulateGrad node.
        self.weights = tuple(get_gradient_edge(p) for p in params)
        self._weight_index = {edge.node: i for i, edge in enumerate(self.weights)}
        self._plans: dict[tuple, _Plan] = {}

    def backward_input(self, output: torch.Tensor, output_grad: torch.Tensor | None,
                       input: torch.Tensor | None) -> tuple[Grad, WeightBackward]:
        """The gradient of ``input`` (None if it needs none) and the W that finishes the weights.

        Without an input to differentiate (stage 0) nothing is computed here and W is the
        whole backward, as B would be.
        """
        seed = output_grad if output_grad is not None else torch.ones_like(output)  # a loss: d loss = 1
        if output.grad_fn is None:
            return None, WeightBackward([])
        if input is None:
            return None, WeightBackward([((output,), (seed,), self.weights, [])])
        nodes, shape, input_at = _graph_shape(output.grad_fn, input, self._weight_index)
        plan = self._plans.get(shape)
        if plan is None:
            plan = self._plans[shape] = self._plan(nodes, nodes[input_at] if input_at >= 0 else None)
        wanted = [GradientEdge(nodes[i], k) for i, k in plan.edges]
        input_grad, *found = _run_backward((output,), (seed,), (input, *wanted), keep_graph=True, accumulate=False)
        groups = []
        for start, stop, weights, several in plan.groups:
            roots, grads = tuple(wanted[start:stop]), tuple(found[start:stop])
            if _NONE in map(type, grads):  # an output the loss does not depend on (not `None in`: tensor ==)
                roots = tuple(root for root, grad in zip(roots, grads) if grad is not None)
                grads = tuple(grad for grad in grads if grad is not None)
            recorded = _recorded(nodes, plan.edges[start:stop], found[start:stop]) if several else []
            groups.append((roots, grads, weights, recorded))
        return input_grad, WeightBackward(groups)

    def _plan(self, nodes: list[Node], input_node: Node | None) -> _Plan:
        """Groups of branch points and their weights, sharing no branch point (none if the
        input does not reach the output: then W is the whole weight backward from it)."""
        position = {node: i for i, node in enumerate(nodes)}
        parents: dict[Node, list[Node]] = {node: [] for node in nodes}
        for node in nodes:
            for child, _ in node.next_functions:
                if child is not None:
                    parents[child].append(node)
        on_input_path = _upward(input_node, parents, stop=set(), met={}) if input_node is not None else {nodes[0]}
        groups: list[tuple[list[int], list[int]]] = []
        for weight, edge in enumerate(self.weights):
            met: dict[Node, None] = {}  # ordered, for a deterministic W
            _upward(edge.node, parents, stop=on_input_path, met=met)
            points = [position[node] for node in met]
            joined = [group for group in groups if not set(group[0]).isdisjoint(points)]
            merged = list(dict.fromkeys([*(i for group in joined for i in group[0]), *points]))
            groups = [group for group in groups if group not in joined]
            groups.append((merged, [w for group in joined for w in group[1]] + [weight]))
        groups = [group for group in groups if group[0]]
        edges: list[tuple[int, int]] = []
        spans = []
        for points, weights in groups:
            start = len(edges)
            edges += [(i, k) for i in points for k in range(len(nodes[i]._input_metadata))]
            spans.append((start, len(edges), tuple(self.weights[w] for w in weights), len(points) > 1))
        return _Plan(tuple(edges), tuple(spans))


def _recorded(nodes: list[Node], edges: tuple[tuple[int, int], ...], found: list[Grad]) -> list[tuple[Node, tuple[Grad, ...]]]:
    """Each branch point of a group with the gradients taken at all its outputs."""
    by_node: dict[int, list[Grad]] = {}
    for (i, _), grad in zip(edges, found):
        by_node.setdefault(i, []).append(grad)
    return [(nodes[i], tuple(grads)) for i, grads in by_node.items()]


def _graph_shape(root: Node, input: torch.Tensor, weight_index: dict[Node, int]) -> tuple[list[Node], tuple, int]:
    """The nodes under ``root`` in breadth-first order, a key that equals another graph's
    exactly when the two have the same node types, edges, weights and input position, and
    the index of ``input``'s node (-1 if ``root`` does not reach it).

    It runs once per I, so it is one flat list: per node its type, then per edge the child's
    index (-1 for none) and output number, then a mark (weight index, -2 input, -1 other).
    """
    index = {root: 0}
    nodes = [root]
    shape: list = []
    append = shape.append
    input_at = -1
    for position, node in enumerate(nodes):  # grows while it is walked
        append(type(node))
        edges = node.next_functions
        for child, output_nr in edges:
            if child is None:
                append(-1)
            else:
                at = index.get(child)
                if at is None:
                    at = index[child] = len(nodes)
                    nodes.append(child)
                append(at)
            append(output_nr)
        mark = weight_index.get(node, -1)
        if mark < 0 and not edges and getattr(node, "variable", None) is input:
            mark, input_at = -2, position
        append(mark)
    return nodes, tuple(shape), input_at


def _upward(start: Node, parents: dict[Node, list[Node]], stop: set[Node], met: dict[Node, None]) -> set[Node]:
    """Nodes from ``start`` up towards the root, not passing nodes of ``stop`` (added to ``met``)."""
    seen: set[Node] = set()
    queue = [start] if start in parents else []
    while queue:
        node = queue.pop()
        if node in stop:
            met[node] = None
        elif node not in seen:
            seen.add(node)
            queue.extend(parents[node])
    return seen
