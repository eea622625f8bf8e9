"""pdb parity: condition."""
def g(n):
    half = n // 2
    return half

breakpoint()
for k in range(6):
    g(k)
end = 1
