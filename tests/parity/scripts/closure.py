"""pdb parity: closure."""
def make(k):
    def add(x):
        return x + k
    return add

adder = make(5)
breakpoint()
out = adder(1)
