"""The runtime's split backward: I then W gives B's gradients, and W starts where I stopped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from torch.autograd.graph import get_gradient_edge  # noqa: E402

from meshdbg.worker.pipelining.split_backward import SplitBackward  # noqa: E402
from meshdbg.worker.pipelining.toymodel import StageChunk, loss_fn  # noqa: E402


class Shared(torch.nn.Module):
    """Two branch points for one weight (``a`` used twice, once below the other) and a
    weight (``s``) that joins the input's path in two places."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
        self.s = torch.nn.Parameter(torch.randn(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.a(x))
        return self.b(h) * self.s + self.a(h) + self.s


@pytest.mark.parametrize("make", [lambda: StageChunk(1, 8, 0), Shared], ids=["linear-tanh", "shared-weights"])
@pytest.mark.parametrize("last", [False, True], ids=["middle", "last"])
@pytest.mark.parametrize("first", [False, True], ids=["with-input", "stage-0"])
def test_input_then_weight_half_equal_the_full_backward(make: Callable[[], torch.nn.Module], last: bool,
                                                        first: bool) -> None:
    full, split_module = make(), make()
    split = SplitBackward(split_module)
    for step in range(3):  # the second and third reuse the plan of the first
        x, grad, target = torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)

        def run(module: torch.nn.Module, inputs: torch.Tensor) -> torch.Tensor:
            return loss_fn(module(inputs), target) if last else module(inputs)

        expected_input = x.clone().requires_grad_(not first)
        torch.autograd.backward(run(full, expected_input), None if last else grad)
        split_input = x.clone().requires_grad_(not first)
        input_grad, weights = split.backward_input(run(split_module, split_input), None if last else grad,
                                                   None if first else split_input)
        assert step > 0 or all(p.grad is None for p in split_module.parameters())  # I left the weights alone
        weights.run()
        for want, got in zip(full.parameters(), split_module.parameters()):
            assert torch.allclose(want.grad, got.grad, atol=1e-5)
        if not first:
            assert torch.allclose(input_grad, expected_input.grad, atol=1e-6)
    assert len(split._plans) == (0 if first else 1)


def test_the_input_half_computes_no_weight_gradient() -> None:
    stage = StageChunk(1, 8, 0)
    split = SplitBackward(stage)
    x = torch.randn(4, 8, requires_grad=True)
    _, weights = split.backward_input(stage(x), torch.randn(4, 8), x)
    assert all(p.grad is None for p in stage.parameters())
    weights.run()
    assert all(p.grad is not None for p in stage.parameters())


class Linears(torch.nn.Module):
    """Linears with and without a bias, on a 3-D input (the matmul sees it flattened)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.tanh(self.a(x)))


def split_grads(module: torch.nn.Module, split: SplitBackward, x: torch.Tensor, grad: torch.Tensor) -> list[torch.Tensor]:
    """The weights' gradients after two microbatches of I then W (a first .grad, then a sum)."""
    for _ in range(2):
        inputs = x.clone().requires_grad_()
        _, weights = split.backward_input(module(inputs), grad, inputs)
        weights.run()
    return [p.grad.clone() for p in module.parameters()]


def engine_ran_for(module: torch.nn.Module, split: SplitBackward, x: torch.Tensor, grad: torch.Tensor) -> bool:
    """Whether W went through autograd: a hook on a weight's AccumulateGrad node (the kind
    of hook Python cannot see) fires only then."""
    fired = []
    handle = get_gradient_edge(module.a.weight).node.register_hook(lambda *_: fired.append(1))
    try:
        split_grads(module, split, x, grad)
    finally:
        handle.remove()
    return bool(fired)


def test_a_linear_is_finished_without_autograd_and_gets_the_same_gradients() -> None:
    x, grad = torch.randn(3, 4, 8), torch.randn(3, 4, 8)
    fused, engine, full = Linears(), Linears(), Linears()
    for _ in range(2):
        torch.autograd.backward(full(x.clone().requires_grad_()), grad)
    got = split_grads(fused, SplitBackward(fused), x, grad)
    want = split_grads(engine, SplitBackward(engine, fuse_linear=False), x, grad)
    for g_fused, g_engine, p_full in zip(got, want, full.parameters()):
        assert torch.allclose(g_fused, p_full.grad, atol=1e-5) and torch.allclose(g_engine, p_full.grad, atol=1e-5)
    module = Linears()
    assert not engine_ran_for(module, SplitBackward(module), x, grad)
    assert engine_ran_for(module, SplitBackward(module, fuse_linear=False), x, grad)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anything_that_could_tell_the_difference_keeps_the_engine() -> None:
    x, grad = torch.randn(4, 8), torch.randn(4, 8)
    hooked = Linears()
    seen = []
    hooked.a.weight.register_hook(lambda g: seen.append(g.shape))  # a tensor hook sees every gradient
    assert engine_ran_for(hooked, SplitBackward(hooked), x, grad) and seen == [(8, 8)] * 2
    accumulated = Linears()
    accumulated.a.bias.register_post_accumulate_grad_hook(lambda p: seen.append("bias"))
    assert engine_ran_for(accumulated, SplitBackward(accumulated), x, grad) and seen.count("bias") == 2
    plain = Linears()
    with torch.autograd.detect_anomaly():
        assert engine_ran_for(plain, SplitBackward(plain), x, grad)


def test_a_module_wrapped_in_ddp_keeps_the_engine(tmp_path) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rendezvous'}", rank=0, world_size=1)
    try:
        wrapped = torch.nn.parallel.DistributedDataParallel(Linears())
        assert not SplitBackward(wrapped).fuse_linear
    finally:
        dist.destroy_process_group()


def test_the_runtime_passes_fuse_linear_on_to_every_stage() -> None:
    from meshdbg.worker.pipelining.lowering import lower
    from meshdbg.worker.pipelining.runtime import PipelineRuntime
    from meshdbg.worker.pipelining.schedules import generate

    schedule = lower(generate("interleaved-1f1b", 1, 2, 2))
    modules = {stage: StageChunk(stage, 8, 0) for stage in (0, 1)}
    for fuse in (True, False):
        runtime = PipelineRuntime(schedule, 0, modules, loss_fn, (4, 8), fuse_linear=fuse)
        assert [runtime.split[stage].fuse_linear for stage in (0, 1)] == [fuse, fuse]
