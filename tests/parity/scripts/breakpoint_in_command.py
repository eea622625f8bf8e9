"""pdb parity: a breakpoint() inside a pdb command (`p f()`) does not stop, as locally."""
def f():
    breakpoint()
    return 1


breakpoint()
x = 2
y = 3
