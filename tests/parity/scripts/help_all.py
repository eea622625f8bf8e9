"""pdb parity: help all."""
breakpoint()
x = 1
