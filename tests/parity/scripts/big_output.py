"""pdb parity: big output."""
rows = [f"row {i:04d} " + "x" * 60 for i in range(2000)]
breakpoint()
n = len(rows)
