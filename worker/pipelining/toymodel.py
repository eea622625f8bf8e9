"""A small deterministic MLP split into pipeline stages, for the example, tests and benchmark.

Every process builds stage `s` identically from the seed, so ranks need not exchange weights,
and `reference_step` can compute the unpipelined loss and gradients to compare against.
"""

from __future__ import annotations

import time

import torch
from torch import nn

from meshdbg.worker.pipelining.runtime import pipeline_context


class StageChunk(nn.Module):
    """One pipeline stage: Linear then tanh. `raise_at` and `sleep_at` make a script fail or lag
    in it, once per (stage, microbatch)."""

    def __init__(self, stage: int, hidden: int, seed: int) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(seed * 1000 + stage)
        self.stage = stage
        self.linear = nn.Linear(hidden, hidden)
        with torch.no_grad():
            self.linear.weight.copy_(torch.randn(hidden, hidden, generator=generator) / hidden ** 0.5)
            self.linear.bias.copy_(torch.randn(hidden, generator=generator) * 0.1)
        self.raise_at: set[tuple[int, int]] = set()
        self.sleep_at: dict[tuple[int, int], float] = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        context = pipeline_context()
        microbatch = context.microbatch if context else -1
        time.sleep(self.sleep_at.pop((self.stage, microbatch), 0))
        if (self.stage, microbatch) in self.raise_at:
            raise RuntimeError(f"injected failure in stage {self.stage} microbatch {microbatch}")
        return torch.tanh(self.linear(x))


def make_batch(batch: int, hidden: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and regression targets, identical on every rank."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(batch, hidden, generator=generator), torch.randn(batch, hidden, generator=generator)


def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(output, target)


def reference_step(num_stages: int, hidden: int, seed: int, batch: int) -> tuple[float, dict[str, list[float]]]:
    """Loss and every parameter's gradient of one unpipelined step (names `stage.param`)."""
    stages = [StageChunk(s, hidden, seed) for s in range(num_stages)]
    inputs, targets = make_batch(batch, hidden, seed)
    loss = loss_fn(nn.Sequential(*stages)(inputs), targets)
    loss.backward()
    return loss.item(), stage_gradients(dict(enumerate(stages)))


def stage_gradients(stages: dict[int, nn.Module]) -> dict[str, list[float]]:
    """Every parameter's gradient by `stage.param` name, comparable across processes."""
    return {f"{s}.{name}": _gradient(f"{s}.{name}", p) for s, stage in stages.items() for name, p in stage.named_parameters()}


def _gradient(name: str, parameter: nn.Parameter) -> list[float]:
    if parameter.grad is None:
        raise ValueError(f"parameter {name} has no gradient: run a backward first")
    return parameter.grad.flatten().tolist()
