"""pdb parity: list cmds."""
def long_function(x):
    y = x + 1
    z = y * 2
    w = z - 3
    breakpoint()
    v = w / 2
    return v

long_function(5)
