"""torch.distributed initialises unchanged from the launcher's variables: a gloo all_reduce."""
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
print("sum", int(value.item()), "world", dist.get_world_size())
dist.destroy_process_group()
