"""pdb parity: commands silent."""
def visit(n):
    seen = n + 100
    return seen

breakpoint()
for k in range(3):
    visit(k)
finished = True
