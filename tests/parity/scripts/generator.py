"""pdb parity: generator."""
def gen():
    for i in range(3):
        yield i * i

breakpoint()
values = list(gen())
total = sum(values)
