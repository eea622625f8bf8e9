"""pdb parity: rebreak loop."""
def step(i):
    breakpoint()
    return i

for i in range(3):
    step(i)
