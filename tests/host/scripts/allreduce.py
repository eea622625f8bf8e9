"""A gloo all_reduce over every rank of the mesh: each adds rank + 1."""
import os
import socket

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
print("SUM", dist.get_rank(), socket.gethostname(), int(value.item()), flush=True)
dist.destroy_process_group()
