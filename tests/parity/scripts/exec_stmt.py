"""pdb parity: exec stmt."""
value = 10
breakpoint()
after = value
