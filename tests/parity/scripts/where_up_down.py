"""pdb parity: where up down."""
def a():
    return b()

def b():
    return c()

def c():
    breakpoint()
    return 3

a()
