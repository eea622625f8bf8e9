"""Prints its environment, then long lines on both streams to check prefixing."""
import os
import sys

keys = ["MESHDBG_RANK", "MESHDBG_COORDS", "MESHDBG_NAME", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
        "MASTER_PORT"]
print("ENV " + " ".join(f"{key}={os.environ.get(key, '')}" for key in keys))
print("ADDR " + ("yes" if os.environ.get("MESHDBG_ADDR") and os.environ.get("MESHDBG_TOKEN") else "no"))
rank = os.environ["RANK"]
for i in range(200):
    sys.stdout.write(f"out {rank} {i} " + rank * 300 + "\n")
    sys.stderr.write(f"err {rank} {i} " + rank * 300 + "\n")
sys.stdout.write("no newline at the end")
