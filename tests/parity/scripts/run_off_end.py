"""pdb parity: run off end."""
breakpoint()
x = 1
