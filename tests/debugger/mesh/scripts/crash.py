"""Rank 1 raises an uncaught error; the other ranks finish normally."""
import os


def compute(rank: int) -> float:
    if rank == 1:
        raise ZeroDivisionError("rank 1 divides by zero")
    return 1.0


value = compute(int(os.environ["RANK"]))
print("value", value)
