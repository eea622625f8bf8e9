"""pdb's own calls in a process that torchrun, srun or a pool starts: set_trace, then post_mortem."""
import pdb

x = 7
pdb.set_trace()
try:
    x / 0
except ZeroDivisionError:
    pdb.post_mortem()
print("done", x, flush=True)
