"""Each rank says where it runs, stops in pdb once, then exits."""
import os
import socket

print("WHERE", os.environ["RANK"], socket.gethostname(), os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"],
      os.environ["LOCAL_RANK"], os.environ["WORLD_SIZE"], flush=True)
here = socket.gethostname()
breakpoint()
print("DONE", os.environ["RANK"], flush=True)
