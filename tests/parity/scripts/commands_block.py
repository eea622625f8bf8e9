"""pdb parity: commands block."""
def visit(n):
    seen = n * 10
    return seen

breakpoint()
for k in range(3):
    visit(k)
finished = True
