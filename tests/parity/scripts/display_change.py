"""pdb parity: a display expression that changes (`display x: 7  [old: 41]`)."""


def compute():
    x = 41
    breakpoint()
    y = x + 1
    z = y * 2
    return z


compute()
