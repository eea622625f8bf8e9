"""pdb parity: breakpoints."""
def f(n):
    square = n * n
    return square

breakpoint()
for k in range(4):
    f(k)
end = True
