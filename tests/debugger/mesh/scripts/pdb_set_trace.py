"""The classic `import pdb; pdb.set_trace()`, once plain and once with a header, in each rank."""
import os

rank = int(os.environ.get("MESHDBG_RANK", "0"))
x = rank * 10
import pdb; pdb.set_trace()  # noqa: E702,I001
y = x + 1
pdb.set_trace(header=f"rank {rank} checks y")
print("rank", rank, "done", y, flush=True)
