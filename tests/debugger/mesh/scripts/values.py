"""Every rank stops in pdb holding a loss (rank 2's is NaN), an array and a rank-dependent name."""

import os

import numpy as np

RANK = int(os.environ["RANK"])


def step():
    loss = float("nan") if RANK == 2 else 0.693
    grads = np.arange(6, dtype=np.float32) * (2 if RANK == 2 else 1)
    if RANK == 1:
        only_on_one = "here"
    breakpoint()
    return loss, grads


step()
