"""pdb parity: ignore."""
def h(n):
    return n * 3

breakpoint()
for k in range(5):
    h(k)
finished = True
