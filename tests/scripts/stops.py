"""Each rank stops at a different line; then computes and prints a result."""

import os

rank = int(os.environ["MESHDBG_RANK"])


def work(x):
    y = x * 10
    z = y + 1
    w = z + 1
    return w


def stop_zero():
    value = "zero"
    breakpoint()
    return value


def stop_one():
    value = "one"

    breakpoint()
    return value


def stop_other():
    value = "other"


    breakpoint()
    return value


label = [stop_zero, stop_one][rank]() if rank < 2 else stop_other()
result = work(rank)
print(f"rank {rank} label {label} result {result}", flush=True)
