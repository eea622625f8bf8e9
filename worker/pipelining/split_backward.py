"""A stage's backward in two halves, as zero-bubble schedules run it: I, then W.

``I`` (``SplitBackward.backward_input``) computes the gradient of the stage's input only,
and on its way takes the gradient at each autograd node where a weight's branch leaves the
input's path (for ``Linear``, the gradient of its output). ``W`` (``WeightBackward.run``)
starts from those nodes, so it computes only the weight gradients and walks nothing ``I``
already walked. This is the method of torch's ``stage_backward_input`` /
``stage_backward_weight``.

A ``Linear`` (a matmul node whose weight arrives through a transpose, with or without a
bias) is finished without autograd: its weight gradient is the layer's input, which the
node saved, against the gradient ``I`` recorded, added straight into ``.grad`` in one
``addmm_``, as the zero-bubble papers' ``WeightGradStore`` does. That saves the engine
call, a temporary the size of the weight, and a pass over it (``bench/bench_pipeline.py``:
I + W against B on the benchmark model). It is taken only where nothing could tell the
difference: no hook on the tensors, anomaly mode off, matching dtypes, a plain ``.grad``;
a module wrapped in ``DistributedDataParallel`` (whose reducer hooks the weights'
``AccumulateGrad`` nodes, hooks Python cannot see) never takes it, and
``SplitBackward(module, fuse_linear=False)`` turns it off for any other such hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from torch.autograd.graph import GradientEdge, Node, get_gradient_edge
from torch.autograd.variable import Variable
from torch.nn.parallel import DistributedDataParallel

Grad = torch.Tensor | None
_NONE = type(None)
Root = torch.Tensor | GradientEdge
_MATMULS = {"AddmmBackward0": 3, "MmBackward0": 2}  # node type -> edges: (bias,) input, transposed weight


def run_backward(roots: tuple[Root, ...], grads: tuple[Grad, ...], inputs: tuple[Root, ...],
                 keep_graph: bool, accumulate: bool) -> tuple[Grad, ...]:
    """The engine call ``torch.autograd.backward`` and ``grad`` end in, without their argument
    normalisation, which costs about 30 µs a call (an eighth of a B on the benchmark model).

    ``accumulate``: add into ``.grad`` of ``inputs`` (all leaves if none), as ``backward``
    does; else return the gradients of ``inputs``, None for one the roots do not reach.
    """
    return Variable._execution_engine.run_backward(roots, grads, keep_graph, False, inputs, True, accumulate)


class _Linear(NamedTuple):
    """A Linear whose W is one ``addmm_``: its matmul node, the gradient I recorded at the
    node's output, its weight and bias (None without one)."""

    node: Node
    grad: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None

    @property
    def _addmm(self) -> bool:
        return type(self.node).__name__ == "AddmmBackward0"  # else MmBackward0 (no bias)

    def can_fuse(self) -> bool:
        """Whether finishing it without autograd is indistinguishable from the engine's W."""
        node: Any = self.node  # its saved scalars and tensors are untyped in torch's stubs
        if torch.is_anomaly_enabled() or (self._addmm and (node._saved_alpha != 1 or node._saved_beta != 1)):
            return False
        return all(p is None or _unwatched(p, self.grad.dtype) for p in (self.weight, self.bias))

    def run(self) -> None:
        """Add the weight's and the bias's gradient into their ``.grad``, as AccumulateGrad
        would (a first gradient becomes ``.grad``; a later one is added in place)."""
        node: Any = self.node  # its saved tensors are untyped in torch's stubs
        grad = self.grad
        saved_input = node._saved_mat1 if self._addmm else node._saved_self
        with torch.no_grad():
            weight = self.weight
            if weight.grad is None:
                weight.grad = torch.mm(grad.t(), saved_input)
            else:
                weight.grad.addmm_(grad.t(), saved_input)
            if self.bias is not None:
                bias_grad = grad.sum(0)
                if self.bias.grad is None:
                    self.bias.grad = bias_grad
                else:
                    self.bias.grad.add_(bias_grad)


def _unwatched(param: torch.Tensor, dtype: torch.dtype) -> bool:
    """A leaf no hook watches, of `dtype`, whose ``.grad`` (if any) ``addmm_`` may add to."""
    grad = param.grad
    return (not param._backward_hooks and not param._post_accumulate_grad_hooks and param.dtype == dtype
            and (grad is None or (grad.layout is torch.strided and not grad.requires_grad)))


_Group = tuple[tuple[Root, ...], tuple[Grad, ...], tuple[GradientEdge, ...], list[tuple[Node, tuple[Grad, ...]]]]


class WeightBackward:
    """The weight half of a split backward: per group of weights, the roots to start from
    (nodes where the weights' branches leave the input's path, with the gradients recorded
    there; or the stage output itself) and the weights to finish, or one ``_Linear``."""

    def __init__(self, groups: list[_Group | _Linear]) -> None:
        self.groups = groups

    def run(self) -> None:
        """Accumulate every weight's gradient into its ``.grad``, then drop what was kept.

        Each group asks for its own weights only, so autograd walks only their branches.
        """
        for group in self.groups:
            if isinstance(group, _Linear):
                if group.can_fuse():
                    group.run()
                    continue
                group = (GradientEdge(group.node, 0),), (group.grad,), _edges(group), []
            roots, grads, weights, recorded = group
            # A root below another one of its group would get that one's flow on top of the
            # gradient recorded for it, which already holds it: make it take what was recorded.
            handles = [node.register_prehook(lambda _, seen=seen: seen) for node, seen in recorded] \
                if len(recorded) > 1 else []
            try:
                run_backward(roots, grads, weights, keep_graph=False, accumulate=True)
            finally:
                for handle in handles:
                    handle.remove()
        self.groups = []


def _edges(linear: _Linear) -> tuple[GradientEdge, ...]:
    return tuple(get_gradient_edge(p) for p in (linear.weight, linear.bias) if p is not None)


@dataclass(frozen=True)
class _Plan:
    """Where to take gradients in a graph of one shape: ``edges`` are (node index, output)
    pairs; each group is (start, stop, weights, several nodes, linear): it owns
    ``edges[start:stop]``; ``linear`` is (weight, bias or -1) as indices of the module's
    weights when the group is one Linear's (see ``_linear_weights``), else None."""

    edges: tuple[tuple[int, int], ...]
    groups: tuple[tuple[int, int, tuple[GradientEdge, ...], bool, tuple[int, int] | None], ...]


class SplitBackward:
    """I and W for one stage module (see the module docstring).

    Which nodes the weights branch from is worked out once per shape of the autograd graph
    (node types and edges, which weights and where the input sit) and reused while the
    shape repeats, as it does microbatch after microbatch.
    """

    def __init__(self, module: torch.nn.Module, fuse_linear: bool = True) -> None:
        self.params = [p for p in module.parameters() if p.requires_grad]
        # Held for the runtime's life, so each weight keeps one AccumulateGrad node.
        self.weights = tuple(get_gradient_edge(p) for p in self.params)
        self._weight_index = {edge.node: i for i, edge in enumerate(self.weights)}
        self._plans: dict[tuple, _Plan] = {}
        self.fuse_linear = fuse_linear and not isinstance(module, DistributedDataParallel)

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
        input_grad, *found = run_backward((output,), (seed,), (input, *wanted), keep_graph=True, accumulate=False)
        groups: list[_Group | _Linear] = []
        for start, stop, weights, several, linear in plan.groups:
            roots, grads = tuple(wanted[start:stop]), tuple(found[start:stop])
            if linear is not None and grads[0] is not None:
                weight, bias = linear
                groups.append(_Linear(roots[0].node, grads[0], self.params[weight], self.params[bias] if bias >= 0 else None))
                continue
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
            linear = _linear_weights(nodes[points[0]], on_input_path, self._weight_index) \
                if self.fuse_linear and len(points) == 1 else None
            if linear is not None and sorted(w for w in linear if w >= 0) != sorted(weights):
                linear = None
            spans.append((start, len(edges), tuple(self.weights[w] for w in weights), len(points) > 1, linear))
        return _Plan(tuple(edges), tuple(spans))


def _linear_weights(node: Node, on_input_path: set[Node], weight_index: dict[Node, int]) -> tuple[int, int] | None:
    """(weight, bias or -1) if ``node`` is a Linear's matmul: ``addmm(bias, input, weight.t())``
    or ``mm(input, weight.t())``, its input on the input's path and its weight (and bias)
    the module's own leaves; else None."""
    edges = node.next_functions
    if _MATMULS.get(type(node).__name__) != len(edges):
        return None
    (bias_node, _), (input_node, _), (transpose, _) = ((None, 0), *edges) if len(edges) == 2 else edges
    if (input_node not in on_input_path or transpose is None or type(transpose).__name__ != "TBackward0"
            or len(transpose.next_functions) != 1):
        return None
    weight_node = transpose.next_functions[0][0]
    weight = weight_index.get(weight_node, -1) if weight_node is not None else -1
    bias = -1 if bias_node is None else weight_index.get(bias_node, -2)
    return (weight, bias) if weight >= 0 and bias != -2 else None


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
