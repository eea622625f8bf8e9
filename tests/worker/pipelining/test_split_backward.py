"""The runtime's split backward: I then W gives B's gradients, and W starts where I stopped."""

from __future__ import annotations

from collections.abc import Callable

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from meshdbg.worker.pipelining.runtime import SplitBackward  # noqa: E402
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
