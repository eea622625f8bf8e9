"""A toy training step: every rank computes a loss and stops at breakpoint()."""

import os

rank = int(os.environ.get("MESHDBG_RANK", "0"))


def train_step(step: int) -> float:
    weights = [0.5 * (rank + 1), -0.25]
    loss = sum(w * w for w in weights) / (step + 1)
    breakpoint()  # meshdbg: the rank stops here; the rest of the mesh keeps running
    return loss


losses = [train_step(step) for step in range(2)]
print(f"rank {rank} losses {[round(x, 4) for x in losses]}", flush=True)
