"""pdb parity: recursion."""
def fact(n):
    if n <= 1:
        breakpoint()
        return 1
    return n * fact(n - 1)

fact(4)
