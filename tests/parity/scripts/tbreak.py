"""pdb parity: tbreak."""
def h(n):
    return n + 1

breakpoint()
for k in range(3):
    h(k)
finished = True
