"""pdb's own calls in a process that torchrun, srun or a pool starts: set_trace, post_mortem,
then a `pdb.Pdb` of the program's own."""
import pdb

x = 7
pdb.set_trace()
try:
    x / 0
except ZeroDivisionError:
    pdb.post_mortem()
pdb.Pdb().set_trace()
print("done", x, flush=True)
