"""pdb parity: debug recursive."""
def helper(v):
    w = v * 2
    return w

breakpoint()
r = helper(3)
