"""Each rank writes 20,000 numbered lines of 500 bytes (10 MB) as fast as it can, then a last line."""
import os
import sys

rank = os.environ["RANK"]
body = "x" * 490
out = sys.stdout
for number in range(20_000):
    out.write(f"{number:06d} {body}\n")
out.write(f"END {rank}\n")
