"""pdb parity: alias."""
items = [3, 1, 2]
breakpoint()
items.sort()
