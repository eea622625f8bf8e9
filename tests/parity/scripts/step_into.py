"""pdb parity: step into."""
def inner(n):
    return n * 2

def outer(n):
    value = inner(n)
    return value + 1

breakpoint()
result = outer(4)
done = True
