"""A torch gloo job for `meshdbg run` console tests: rank 1 stops after each all_reduce."""

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
w = torch.ones(3) * (rank + 1)
for step in range(2):
    loss = (w * w).sum()
    dist.all_reduce(loss)
    if rank == 1:
        breakpoint()
    w = w * 0.9
print("rank", rank, "loss", float(loss))
dist.destroy_process_group()
