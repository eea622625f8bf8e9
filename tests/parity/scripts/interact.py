"""pdb parity: interact."""
value = 5
breakpoint()
after = value
