"""pdb parity: step basic."""
def add(a, b):
    total = a + b
    return total

x = 1
breakpoint()
y = add(x, 2)
z = y * 3
