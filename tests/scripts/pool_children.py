"""Two child processes of one rank (a multiprocessing pool's, as a DataLoader's workers) each stop,
with `v` their own value; the parent prints what they returned."""

import multiprocessing


def child(n):
    v = n * 10
    breakpoint()
    return v


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    with multiprocessing.Pool(2) as pool:
        print(pool.map(child, [1, 2]), flush=True)
