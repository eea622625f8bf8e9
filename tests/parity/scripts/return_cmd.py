"""pdb parity: return cmd."""
def work():
    a = 1
    b = 2
    return a + b

breakpoint()
value = work()
after = value
