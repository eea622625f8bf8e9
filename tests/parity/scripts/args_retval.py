"""pdb parity: args retval."""
def compute(alpha, beta=2, *rest, **extra):
    breakpoint()
    return alpha * beta

compute(3, 4, 5, key="v")
